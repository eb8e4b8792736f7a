package forward

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

const hpaCaller = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"

var ownList = &external_metrics.ExternalMetricValueList{Items: []external_metrics.ExternalMetricValue{{
	MetricName: "podpilot_qps", MetricLabels: map[string]string{}, Value: *resource.NewQuantity(7, resource.DecimalSI),
}}}

func TestGetExternalMetric(t *testing.T) {
	ts := metav1.NewTime(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC))
	kedaList := `{"kind":"ExternalMetricValueList","apiVersion":"external.metrics.k8s.io/v1beta1","metadata":{},` +
		`"items":[{"metricName":"s0-prometheus","metricLabels":{"scaledobject.keda.sh/name":"web"},"timestamp":"2026-11-29T06:00:00Z","value":"42500m"}]}`
	tests := []struct {
		name        string
		path        string // the caller's request
		decision    authorizer.Decision
		unserved    error
		answer      func(w http.ResponseWriter)
		want        *external_metrics.ExternalMetricValueList
		wantCode    int32
		wantMessage string
		wantSent    string // the request the other adapter got; "" means none
		wantLocal   bool
	}{
		{
			name:     "a metric no podpilot rule serves is forwarded with the caller's selector, its answer returned unchanged",
			path:     "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus?labelSelector=scaledobject.keda.sh%2Fname%3Dweb",
			decision: authorizer.DecisionAllow,
			answer:   func(w http.ResponseWriter) { _, _ = w.Write([]byte(kedaList)) },
			want: &external_metrics.ExternalMetricValueList{Items: []external_metrics.ExternalMetricValue{{
				MetricName: "s0-prometheus", MetricLabels: map[string]string{"scaledobject.keda.sh/name": "web"},
				Timestamp: ts, Value: resource.MustParse("42500m"),
			}}},
			wantSent: "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus?labelSelector=scaledobject.keda.sh%2Fname%3Dweb",
		},
		{
			name:     "the other adapter's Status error is returned with its code and message",
			path:     "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s1-cron",
			decision: authorizer.DecisionAllow,
			answer: func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"scaledobject not found","reason":"NotFound","code":404}`))
			},
			wantCode: http.StatusNotFound, wantMessage: "scaledobject not found",
			wantSent: "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s1-cron",
		},
		{
			name:     "an error that is not a Status keeps its status code, with its body as the message",
			path:     "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s1-cron",
			decision: authorizer.DecisionAllow,
			answer: func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte("scaler cron: boom\n"))
			},
			wantCode: http.StatusInternalServerError, wantMessage: "scaler cron: boom",
			wantSent: "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s1-cron",
		},
		{
			name:      "podpilot's own metric is answered by podpilot, never forwarded",
			path:      "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/podpilot_qps",
			decision:  authorizer.DecisionAllow,
			want:      ownList,
			wantLocal: true,
		},
		{
			name:        "a caller not allowed to list the metric is refused 403 and nothing is forwarded",
			path:        "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus",
			decision:    authorizer.DecisionNoOpinion,
			wantCode:    http.StatusForbidden,
			wantMessage: `cannot list resource "s0-prometheus" in API group "external.metrics.k8s.io" in the namespace "shop": no RBAC rule`,
		},
		{
			name:     "while podpilot's discovery is incomplete, the other adapter's 404 becomes podpilot's 503",
			path:     "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/maybe_ours",
			decision: authorizer.DecisionAllow,
			unserved: apierrors.NewServiceUnavailable("metric discovery from Prometheus has not succeeded yet"),
			answer: func(w http.ResponseWriter) {
				w.WriteHeader(http.StatusNotFound)
				_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no such metric","reason":"NotFound","code":404}`))
			},
			wantCode: http.StatusServiceUnavailable, wantMessage: "has not succeeded yet",
			wantSent: "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/maybe_ours",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := newOtherAdapter(t, func(w http.ResponseWriter, _ *http.Request) { tt.answer(w) })
			unserved := tt.unserved
			if unserved == nil {
				unserved = provider.NewMetricNotFoundError(externalGR, "x")
			}
			local := &fakeLocal{served: map[string]*external_metrics.ExternalMetricValueList{"podpilot_qps": ownList}, unserved: unserved}
			authz := &recordingAuthz{decision: tt.decision}
			p, _ := newTestProvider(t, local, other.srv.URL, other.caFile, authorizer.AuthorizerFunc(authz.Authorize))
			ctx := callerContext(t, hpaCaller, tt.path)
			metric := tt.path[strings.LastIndex(tt.path, "/")+1:]
			metric, _, _ = strings.Cut(metric, "?")

			got, err := p.GetExternalMetric(ctx, "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: metric})

			if tt.wantCode != 0 {
				if c := statusCode(err); c != tt.wantCode || !strings.Contains(err.Error(), tt.wantMessage) {
					t.Fatalf("got code %d %q, want %d containing %q", c, err.Error(), tt.wantCode, tt.wantMessage)
				}
			} else if err != nil {
				t.Fatal(err)
			} else if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("answer (-want +got):\n%s", diff)
			}
			checkSent(t, other, tt.wantSent)
			if tt.wantLocal != (len(local.calls) > 0) {
				t.Fatalf("podpilot's provider called for %v, want called: %v", local.calls, tt.wantLocal)
			}
			if tt.wantLocal && len(authz.asked) > 0 {
				t.Fatalf("own metric authorized again by podpilot: %v", authz.asked)
			}
		})
	}
}

// checkSent checks that the other adapter got exactly the request want (path?query), with
// podpilot's own identity, or none when want is "".
func checkSent(t *testing.T, other *otherAdapter, want string) {
	t.Helper()
	got := other.requests()
	if want == "" {
		if len(got) > 0 {
			t.Fatalf("the other adapter got %d requests, want none: %s", len(got), got[0].URL)
		}
		return
	}
	if len(got) != 1 {
		t.Fatalf("the other adapter got %d requests, want 1", len(got))
	}
	if s := got[0].URL.RequestURI(); s != want {
		t.Fatalf("forwarded %s, want %s", s, want)
	}
	if a := got[0].Header.Get("Authorization"); a != "Bearer "+podpilotToken {
		t.Fatalf("forwarded with Authorization %q, want podpilot's own token", a)
	}
}

func TestAuthorizeAsTheAggregator(t *testing.T) {
	other := newOtherAdapter(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"items":[]}`)) })
	authz := &recordingAuthz{decision: authorizer.DecisionAllow}
	p, _ := newTestProvider(t, &fakeLocal{}, other.srv.URL, other.caFile, authorizer.AuthorizerFunc(authz.Authorize))
	ctx := callerContext(t, hpaCaller, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus?labelSelector=a%3Db")
	if _, err := p.GetExternalMetric(ctx, "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: "s0-prometheus"}); err != nil {
		t.Fatal(err)
	}
	if len(authz.asked) != 1 {
		t.Fatalf("asked %d times, want once", len(authz.asked))
	}
	a := authz.asked[0]
	got := fmt.Sprintf("%s %s %s/%s %s/%s resource=%v", a.GetUser().GetName(), a.GetVerb(), a.GetAPIGroup(), a.GetAPIVersion(),
		a.GetNamespace(), a.GetResource(), a.IsResourceRequest())
	want := hpaCaller + " list external.metrics.k8s.io/v1beta1 shop/s0-prometheus resource=true"
	if got != want {
		t.Fatalf("authorized %q, want %q", got, want)
	}
}

func TestTargetDown(t *testing.T) {
	other := newOtherAdapter(t, func(http.ResponseWriter, *http.Request) {})
	url, ca := other.srv.URL, other.caFile
	other.srv.Close() // the other adapter is down
	local := &fakeLocal{served: map[string]*external_metrics.ExternalMetricValueList{"podpilot_qps": ownList}, unserved: provider.NewMetricNotFoundError(externalGR, "x")}
	p, reg := newTestProvider(t, local, url, ca, authorizer.AuthorizerFunc((&recordingAuthz{decision: authorizer.DecisionAllow}).Authorize))
	ctx := callerContext(t, hpaCaller, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/podpilot_qps")

	p.refreshList(ctx)
	own, err := p.GetExternalMetric(ctx, "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: "podpilot_qps"})
	if err != nil || cmp.Diff(ownList, own) != "" {
		t.Fatalf("own metric with the other adapter down: %v, %v", own, err)
	}
	if diff := cmp.Diff([]provider.ExternalMetricInfo{{Metric: "podpilot_qps"}}, p.ListAllExternalMetrics()); diff != "" {
		t.Fatalf("discovery with the other adapter down (-want +got):\n%s", diff)
	}
	fctx := callerContext(t, hpaCaller, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus")
	_, err = p.GetExternalMetric(fctx, "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: "s0-prometheus"})
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("forwarded metric with the other adapter down: %v, want a 503", err)
	}
	want := `
# HELP podpilot_external_metrics_forward_errors_total [ALPHA] Failures to reach or read the other external metrics adapter, by op: get (a forwarded request, answered 503) or list (a fetch of its metric list for discovery, which keeps the last list). Its own error answers are not counted.
# TYPE podpilot_external_metrics_forward_errors_total counter
podpilot_external_metrics_forward_errors_total{op="get"} 1
podpilot_external_metrics_forward_errors_total{op="list"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "podpilot_external_metrics_forward_errors_total"); err != nil {
		t.Fatal(err)
	}
}

func TestUntrustedCertificateIsNeverForwardedTo(t *testing.T) {
	other := newOtherAdapter(t, func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"items":[]}`)) })
	p, _ := newTestProvider(t, &fakeLocal{}, other.srv.URL, strangerCA(t), authorizer.AuthorizerFunc((&recordingAuthz{decision: authorizer.DecisionAllow}).Authorize))
	ctx := callerContext(t, hpaCaller, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus")
	_, err := p.GetExternalMetric(ctx, "shop", labels.Everything(), provider.ExternalMetricInfo{Metric: "s0-prometheus"})
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("got %v, want a 503 naming the certificate", err)
	}
	if n := len(other.requests()); n != 0 {
		t.Fatalf("the adapter with an untrusted certificate got %d requests", n)
	}
}

// statusCode is the HTTP code of an API error.
func statusCode(err error) int32 {
	var s apierrors.APIStatus
	if !errorsAs(err, &s) {
		return 0
	}
	return s.Status().Code
}

var errorsAs = errors.As

// strangerCA writes a self-signed certificate for 127.0.0.1 that did not sign the test server's.
func strangerCA(t *testing.T) string {
	t.Helper()
	certPEM, _, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stranger.crt")
	if err := os.WriteFile(path, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The autoscaler's reads: a PodAutoscaler's own-namespace read of a metric podpilot does not
// serve is forwarded (no caller to authorize), and podpilot's own metrics go through the
// autoscaler's own reads (its tenancy options), never the API provider nor the other adapter.
func TestReadExternalMetricForThePodAutoscaler(t *testing.T) {
	other := newOtherAdapter(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"items":[{"metricName":"s0-prometheus","metricLabels":{},"timestamp":"2026-11-29T06:00:00Z","value":"9"}]}`))
	})
	api := &fakeLocal{served: map[string]*external_metrics.ExternalMetricValueList{"podpilot_qps": ownList}, unserved: provider.NewMetricNotFoundError(externalGR, "x")}
	authz := &recordingAuthz{decision: authorizer.DecisionNoOpinion}
	p, _ := newTestProvider(t, api, other.srv.URL, other.caFile, authorizer.AuthorizerFunc(authz.Authorize))
	autoscalerReads := &fakeLocal{served: map[string]*external_metrics.ExternalMetricValueList{"podpilot_qps": ownList}}
	sel, err := labels.Parse("queue=orders")
	if err != nil {
		t.Fatal(err)
	}

	got, err := p.ReadExternalMetric(t.Context(), autoscalerReads, "shop", sel, provider.ExternalMetricInfo{Metric: "s0-prometheus"})
	if err != nil || len(got.Items) != 1 || got.Items[0].Value.String() != "9" {
		t.Fatalf("forwarded read: %+v, %v", got, err)
	}
	checkSent(t, other, "/apis/external.metrics.k8s.io/v1beta1/namespaces/shop/s0-prometheus?labelSelector=queue%3Dorders")
	if _, err := p.ReadExternalMetric(t.Context(), autoscalerReads, "shop", sel, provider.ExternalMetricInfo{Metric: "podpilot_qps"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"podpilot_qps"}, autoscalerReads.calls); diff != "" || len(api.calls) > 0 || len(other.requests()) != 1 {
		t.Fatalf("own metric read by the autoscaler's reads (-want +got):\n%s\nAPI provider calls %v, forwarded %d", diff, api.calls, len(other.requests()))
	}
	if len(authz.asked) > 0 {
		t.Fatalf("the autoscaler's reads asked the authorizer: %v", authz.asked)
	}
}
