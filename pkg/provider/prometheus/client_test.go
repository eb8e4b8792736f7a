package prometheus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/ktesting"
)

func TestPathPrefixIsPreserved(t *testing.T) {
	for _, prefix := range []string{"/tenant-a/", "/tenant-a", "/a/b/prom/"} {
		t.Run(prefix, func(t *testing.T) {
			srv, seen := fakeProm(t, prefix, nil)
			c := newTestClient(t, optionsFor(srv.URL+prefix), nil)
			if _, err := c.Query(t.Context(), "up", time.Time{}); err != nil {
				t.Fatalf("Query() = %v", err)
			}
			if _, err := c.Series(t.Context(), []string{"up"}, time.Time{}, time.Time{}); err != nil {
				t.Fatalf("Series() = %v", err)
			}
			base := strings.TrimSuffix(prefix, "/")
			var got []string
			for _, r := range drain(seen) {
				got = append(got, r.path)
			}
			if diff := cmp.Diff([]string{base + "/api/v1/query", base + "/api/v1/series"}, got); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
		})
	}
}

func TestQueryResults(t *testing.T) {
	at := time.Unix(1700000000, 0)
	tests := []struct {
		name    string
		body    string
		want    model.Vector
		wantErr error
	}{{
		name: "a vector comes back as is",
		body: vectorBody,
		want: model.Vector{{Metric: model.Metric{"pod": "a"}, Value: 3, Timestamp: model.TimeFromUnix(1700000000)}},
	}, {
		name: "a scalar comes back as a one-sample vector without labels",
		body: `{"status":"success","data":{"resultType":"scalar","result":[1700000000,"42"]}}`,
		want: model.Vector{{Metric: model.Metric{}, Value: 42, Timestamp: model.TimeFromUnix(1700000000)}},
	}, {
		name:    "a range vector is a bad query",
		body:    `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1700000000,"1"]]}]}}`,
		wantErr: ErrBadQuery,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := fakeProm(t, "", respondWith(http.StatusOK, tc.body))
			c := newTestClient(t, optionsFor(srv.URL), nil)
			got, err := c.Query(t.Context(), "q", at)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Query() error = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Query() (-want +got):\n%s", diff)
			}
			r := <-seen
			if got, want := r.form.Get("time"), "1700000000"; got != want {
				t.Errorf("time parameter = %q, want %q", got, want)
			}
			if got, want := r.form.Get("timeout"), "10s"; got != want {
				t.Errorf("timeout parameter = %q, want %q (the client timeout)", got, want)
			}
		})
	}
}

func TestSeriesSendsMatchersAndRange(t *testing.T) {
	srv, seen := fakeProm(t, "", nil)
	c := newTestClient(t, optionsFor(srv.URL), nil)
	start, end := time.Unix(1700000000, 0), time.Unix(1700000600, 0)
	got, err := c.Series(t.Context(), []string{`{__name__=~"a.*"}`, "b"}, start, end)
	if err != nil {
		t.Fatalf("Series() = %v", err)
	}
	if diff := cmp.Diff([]model.LabelSet{{"__name__": "up", "pod": "a"}}, got); diff != "" {
		t.Errorf("Series() (-want +got):\n%s", diff)
	}
	r := <-seen
	if diff := cmp.Diff([]string{`{__name__=~"a.*"}`, "b"}, r.form["match[]"]); diff != "" {
		t.Errorf("match[] (-want +got):\n%s", diff)
	}
	if r.form.Get("start") != "1700000000" || r.form.Get("end") != "1700000600" {
		t.Errorf("start, end = %q, %q", r.form.Get("start"), r.form.Get("end"))
	}
}

func TestSeriesWithoutMatchersIsABadQuery(t *testing.T) {
	srv, seen := fakeProm(t, "", nil)
	c := newTestClient(t, optionsFor(srv.URL), nil)
	if _, err := c.Series(t.Context(), nil, time.Time{}, time.Time{}); !errors.Is(err, ErrBadQuery) {
		t.Errorf("Series(nil) = %v, want ErrBadQuery", err)
	}
	if n := len(drain(seen)); n != 0 {
		t.Errorf("Prometheus saw %d requests, want none", n)
	}
}

func TestMethodIsHonoured(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		respond    http.HandlerFunc
		wantMethod []string
	}{{
		name:       "POST sends the parameters as a form body",
		method:     "POST",
		wantMethod: []string{"POST", "POST"},
	}, {
		name:       "GET sends only GETs with the parameters in the URL",
		method:     "get",
		wantMethod: []string{"GET", "GET"},
	}, {
		name:   "POST falls back to GET when Prometheus answers 405",
		method: "POST",
		respond: func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			promHandler("", nil, make(chan seenRequest, 1)).ServeHTTP(w, r)
		},
		wantMethod: []string{"POST", "GET", "POST", "GET"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := fakeProm(t, "", tc.respond)
			o := optionsFor(srv.URL)
			o.Method = tc.method
			c := newTestClient(t, o, nil)
			if _, err := c.Query(t.Context(), `sum(rate(x[5m]))`, time.Time{}); err != nil {
				t.Fatalf("Query() = %v", err)
			}
			if _, err := c.Series(t.Context(), []string{"x"}, time.Time{}, time.Time{}); err != nil {
				t.Fatalf("Series() = %v", err)
			}
			var methods []string
			for _, r := range drain(seen) {
				methods = append(methods, r.method)
				params := r.form
				if r.method == http.MethodGet {
					params = r.query
				}
				if params.Get("query") == "" && params.Get("match[]") == "" {
					t.Errorf("%s %s carried no query or match[] parameter", r.method, r.path)
				}
			}
			if diff := cmp.Diff(tc.wantMethod, methods); diff != "" {
				t.Errorf("methods (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFailedRequestsAreSentOnce(t *testing.T) {
	tests := []struct {
		name   string
		method string
		code   int
		want   int
	}{
		{name: "GET does not retry a 405", method: "GET", code: 405, want: 1},
		{name: "GET does not retry a 503", method: "GET", code: 503, want: 1},
		{name: "POST does not retry a 503", method: "POST", code: 503, want: 1},
		{name: "POST retries a 403 once as GET", method: "POST", code: 403, want: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, seen := fakeProm(t, "", respondWith(tc.code, ""))
			o := optionsFor(srv.URL)
			o.Method = tc.method
			if err := callOp(t.Context(), newTestClient(t, o, nil), opQuery, "up"); err == nil {
				t.Fatal("Query() = nil, want an error")
			}
			if got := len(drain(seen)); got != tc.want {
				t.Errorf("Prometheus saw %d requests, want %d", got, tc.want)
			}
		})
	}
}

func TestErrorsAreClassified(t *testing.T) {
	tests := []struct {
		name      string
		respond   http.HandlerFunc
		want      error // nil: neither sentinel
		wantCause string
	}{{
		name:      "HTTP 503 from Prometheus is unavailable",
		respond:   respondWith(503, `{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`),
		want:      ErrUnavailable,
		wantCause: "query timed out in expression evaluation",
	}, {
		name:      "HTTP 429 from a proxy is unavailable",
		respond:   respondWith(429, "too many outstanding requests"),
		want:      ErrUnavailable,
		wantCause: "429 too many requests: too many outstanding requests",
	}, {
		name:      "HTTP 500 is unavailable",
		respond:   respondWith(500, `{"status":"error","errorType":"internal","error":"storage failure"}`),
		want:      ErrUnavailable,
		wantCause: "storage failure",
	}, {
		name:      "HTTP 502 with an HTML body is unavailable",
		respond:   respondWith(502, "<html>bad gateway</html>"),
		want:      ErrUnavailable,
		wantCause: "<html>bad gateway</html>",
	}, {
		name:      "HTTP 400 bad_data is a bad query",
		respond:   respondWith(400, `{"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected end of input"}`),
		want:      ErrBadQuery,
		wantCause: "parse error: unexpected end of input",
	}, {
		name:      "HTTP 422 execution error is a bad query",
		respond:   respondWith(422, `{"status":"error","errorType":"execution","error":"many-to-many matching not allowed"}`),
		want:      ErrBadQuery,
		wantCause: "many-to-many matching not allowed",
	}, {
		// Thanos Querier's answers with partial_response=false while its only store (a sidecar) is
		// down, as TestBackendStoreDownHoldsReplicas saw them: the store's return mends them.
		name:      "a Thanos store that cannot be reached is unavailable, not a bad query",
		respond:   respondWith(422, `{"status":"error","errorType":"execution","error":"expanding series: proxy Series(): fetch series for {replica=\"0\"} Addr: 127.0.0.1:31680 MinTime: -62167219200000 MaxTime: 9223372036854775807: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:31680: connect: connection refused\""}`),
		want:      ErrUnavailable,
		wantCause: "code = Unavailable",
	}, {
		name:      "a Thanos Querier without any store is unavailable, not a bad query",
		respond:   respondWith(422, `{"status":"error","errorType":"execution","error":"expanding series: proxy Series(): No StoreAPIs available"}`),
		want:      ErrUnavailable,
		wantCause: "No StoreAPIs available",
	}, {
		name:      "HTTP 404 is neither unavailable nor a bad query",
		respond:   respondWith(404, "404 page not found"),
		wantCause: "404 not found",
	}, {
		name:      "HTTP 401 is neither unavailable nor a bad query",
		respond:   respondWith(401, "unauthorized"),
		wantCause: "401 unauthorized",
	}, {
		name:      "a 200 body that is not JSON is neither unavailable nor a bad query",
		respond:   respondWith(200, "<html>login</html>"),
		wantCause: "bad_response",
	}}
	for _, tc := range tests {
		for _, op := range []string{opQuery, opSeries, opQueryRange} {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				srv, _ := fakeProm(t, "", tc.respond)
				c := newTestClient(t, optionsFor(srv.URL), nil)
				err := callOp(t.Context(), c, op, "up")
				assertError(t, err, tc.want, op+` "up": `, tc.wantCause)
			})
		}
	}
}

func TestUnreachablePrometheusIsUnavailable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + lis.Addr().String()
	if err := lis.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		url       string
		wantCause string
	}{
		{name: "connection refused is unavailable", url: refused, wantCause: "connection refused"},
		{name: "a DNS failure is unavailable", url: "http://prometheus.invalid:9090", wantCause: "prometheus.invalid"},
	}
	for _, tc := range tests {
		for _, op := range []string{opQuery, opSeries, opQueryRange} {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				o := optionsFor(tc.url)
				o.Timeout = 5 * time.Second
				err := callOp(t.Context(), newTestClient(t, o, nil), op, "up")
				assertError(t, err, ErrUnavailable, op+` "up": prometheus unavailable: `, tc.wantCause)
			})
		}
	}
}

func TestTimeoutAppliesToEveryCall(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, op := range []string{opQuery, opSeries} {
		t.Run(op, func(t *testing.T) {
			srv, _ := fakeProm(t, "", func(_ http.ResponseWriter, r *http.Request) {
				<-r.Context().Done() // hang until the client gives up
			})
			o := optionsFor(srv.URL)
			o.Timeout = timeout
			c := newTestClient(t, o, nil)
			start := time.Now()
			err := callOp(t.Context(), c, op, "up")
			elapsed := time.Since(start)
			assertError(t, err, ErrUnavailable, op+` "up": prometheus unavailable: `, "deadline exceeded")
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
			}
			if elapsed > 10*timeout {
				t.Errorf("call took %s, want about %s", elapsed, timeout)
			}
		})
	}
}

func TestCallerCancellationIsNotUnavailable(t *testing.T) {
	srv, _ := fakeProm(t, "", nil)
	c := newTestClient(t, optionsFor(srv.URL), nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := callOp(ctx, c, opQuery, "up")
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Errorf("Query() after cancel = %v, want context.Canceled and not ErrUnavailable", err)
	}
}

func TestLongQueriesAreTruncatedInErrors(t *testing.T) {
	srv, _ := fakeProm(t, "", respondWith(400, `{"status":"error","errorType":"bad_data","error":"parse error"}`))
	c := newTestClient(t, optionsFor(srv.URL), nil)
	query := "sum(" + strings.Repeat("é", 1000) + ")"
	_, err := c.Query(t.Context(), query, time.Time{})
	if !errors.Is(err, ErrBadQuery) {
		t.Fatalf("Query() = %v, want ErrBadQuery", err)
	}
	if msg := err.Error(); len(msg) > 2*maxSubjectLen+100 || !strings.Contains(msg, `…"`) {
		t.Errorf("error of %d bytes is not truncated: %s", len(msg), msg)
	}
}

func TestWarningsAreLoggedAtV2(t *testing.T) {
	body := `{"status":"success","warnings":["results truncated due to limit"],"infos":["metric might not be a counter"],` +
		`"data":{"resultType":"vector","result":[]}}`
	srv, _ := fakeProm(t, "", respondWith(200, body))
	o := optionsFor(srv.URL)
	o.WarningsAsErrors = false
	c := newTestClient(t, o, nil)
	for _, v := range []int{1, 2} {
		logger := ktesting.NewLogger(t, ktesting.NewConfig(ktesting.Verbosity(v), ktesting.BufferLogs(true)))
		if _, err := c.Query(klog.NewContext(t.Context(), logger), "up", time.Time{}); err != nil {
			t.Fatalf("Query() = %v", err)
		}
		logs := logger.GetSink().(ktesting.Underlier).GetBuffer().String()
		if got, want := strings.Contains(logs, "results truncated due to limit"), v >= 2; got != want {
			t.Errorf("at verbosity %d, warning logged = %t, want %t; logs:\n%s", v, got, want, logs)
		}
		if strings.Contains(logs, "metric might not be a counter") {
			t.Errorf("at verbosity %d, info logged; want it only at V(4)", v)
		}
	}
}

func TestPartialAnswersAreFailures(t *testing.T) {
	const warning = `partial response: store 10.0.0.7:10901 unavailable`
	answers := map[string]string{
		opQuery:      `{"status":"success","warnings":["` + warning + `"],"data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1,"3"]}]}}`,
		opSeries:     `{"status":"success","warnings":["` + warning + `"],"data":[{"__name__":"up","pod":"a"}]}`,
		opQueryRange: `{"status":"success","warnings":["` + warning + `"],"data":{"resultType":"matrix","result":[{"metric":{"pod":"a"},"values":[[1,"3"]]}]}}`,
	}
	tests := []struct {
		name             string
		warningsAsErrors bool
		wantErr          bool
	}{
		{name: "an answer with warnings is a failed call that says so, by default", warningsAsErrors: true, wantErr: true},
		{name: "an answer with warnings is served with --prometheus-warnings-as-errors=false", warningsAsErrors: false},
	}
	for _, tc := range tests {
		for _, op := range []string{opQuery, opSeries, opQueryRange} {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				srv, seen := fakeProm(t, "", respondWith(200, answers[op]))
				o := optionsFor(srv.URL)
				o.WarningsAsErrors = tc.warningsAsErrors
				reg := metrics.NewKubeRegistry()
				m, err := NewMetrics(reg)
				if err != nil {
					t.Fatal(err)
				}
				err = callOp(t.Context(), newTestClient(t, o, m), op, "up")
				if tc.wantErr {
					assertError(t, err, ErrUnavailable, op+` "up": prometheus unavailable: prometheus answer may be partial: warnings: `, warning)
					if !errors.Is(err, ErrPartialAnswer) {
						t.Errorf("error %v does not wrap ErrPartialAnswer", err)
					}
				} else if err != nil {
					t.Fatalf("%s = %v, want the answer", op, err)
				}
				if got := (<-seen).form.Get("partial_response"); got != "false" {
					t.Errorf("partial_response = %q, want false", got)
				}
				want := fmt.Sprintf(`
# HELP podpilot_prometheus_client_answers_with_warnings_total %s
# TYPE podpilot_prometheus_client_answers_with_warnings_total counter
podpilot_prometheus_client_answers_with_warnings_total{backend="default",operation=%q} 1
`, m.warnings.Help, op)
				if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "podpilot_prometheus_client_answers_with_warnings_total"); err != nil {
					t.Error(err)
				}
				partial, _ := testutil.GetCounterMetricValue(m.errors.WithLabelValues("default", op, outcomePartial))
				if wantPartial := map[bool]float64{true: 1}[tc.wantErr]; partial != wantPartial {
					t.Errorf("request_errors_total{outcome=partial} = %g, want %g", partial, wantPartial)
				}
			})
		}
	}
}

// callOp calls the Client method named op with one query or matcher.
func callOp(ctx context.Context, c Client, op, q string) error {
	switch op {
	case opSeries:
		_, err := c.Series(ctx, []string{q}, time.Time{}, time.Time{})
		return err
	case opQueryRange:
		end := time.Unix(1_795_000_000, 0)
		_, err := c.QueryRange(ctx, q, end.Add(-time.Hour), end, time.Minute)
		return err
	}
	_, err := c.Query(ctx, q, time.Time{})
	return err
}

// assertError checks the sentinel (nil: neither), the prefix and the cause.
func assertError(t *testing.T, err, want error, prefix, cause string) {
	t.Helper()
	if err == nil {
		t.Fatal("got no error")
	}
	if want != nil && !errors.Is(err, want) {
		t.Errorf("error %q does not wrap %q", err, want)
	}
	for _, other := range []error{ErrUnavailable, ErrBadQuery} {
		if !errors.Is(other, want) && errors.Is(err, other) {
			t.Errorf("error %q wraps %q too", err, other)
		}
	}
	if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, cause) {
		t.Errorf("error = %q, want prefix %q and cause %q", msg, prefix, cause)
	}
}
