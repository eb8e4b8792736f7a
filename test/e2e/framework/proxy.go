package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Fault is what a PrometheusProxy does to the answers it relays. The zero
// Fault relays every request unchanged.
type Fault struct {
	// Delay holds every request this long before relaying it, until the
	// client gives up or the fault changes (a recovering Prometheus answers
	// what it holds).
	Delay time.Duration
	// Status, if set, answers every request with this HTTP status and a
	// Prometheus-style error body instead of relaying it.
	Status int
	// Truncate relays instant-query answers cut to half their length, with a
	// matching Content-Length: a clean end of body inside the JSON.
	Truncate bool
	// Value, if set, replaces the value of every sample of instant-query
	// answers, e.g. "NaN", "+Inf" or "-Inf".
	Value string
	// Shift moves the timestamp of every sample of instant-query answers,
	// e.g. ten years into the future or the past.
	Shift time.Duration
	// Warnings, if set, are added to every instant-query answer, which still
	// answers 200: what Thanos Querier sends when a store is lost and partial
	// responses are on.
	Warnings []string
}

// String names the fault for logs.
func (f Fault) String() string {
	var parts []string
	if f.Delay > 0 {
		parts = append(parts, "delay "+f.Delay.String())
	}
	if f.Status != 0 {
		parts = append(parts, "HTTP "+strconv.Itoa(f.Status))
	}
	if f.Truncate {
		parts = append(parts, "truncated JSON")
	}
	if f.Value != "" {
		parts = append(parts, "values "+f.Value)
	}
	if f.Shift != 0 {
		parts = append(parts, "timestamps shifted "+f.Shift.String())
	}
	if len(f.Warnings) > 0 {
		parts = append(parts, fmt.Sprintf("warnings %q", f.Warnings))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// PrometheusProxy is an HTTP proxy in front of the cluster's Prometheus whose
// answers the test controls: podpilot is started with --prometheus-url set to
// URL, so faults reach it exactly as a misbehaving Prometheus (or a network
// in between) would, with no special code path in podpilot.
type PrometheusProxy struct {
	// URL is the proxy's base URL, for --prometheus-url.
	URL string

	srv     *httptest.Server
	relay   *httputil.ReverseProxy
	mu      sync.Mutex
	fault   Fault
	changed chan struct{} // closed when the fault changes
	queries atomic.Int64
	log     []loggedQuery // guarded by mu; at most maxLoggedQueries
}

// loggedQuery is an instant query the proxy received, and when.
type loggedQuery struct {
	at    time.Time
	query string
}

// maxLoggedQueries bounds the proxy's query log.
const maxLoggedQueries = 1 << 20

// StartPrometheusProxy starts a proxy on 127.0.0.1 relaying to what the
// cluster's podpilot queries (BackendURL: its Prometheus unless
// PODPILOT_BACKEND says otherwise) without faults, closed when the test ends.
func (c *Cluster) StartPrometheusProxy(t testing.TB) *PrometheusProxy {
	t.Helper()
	p, err := NewPrometheusProxy(c.BackendURL, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// NewPrometheusProxy starts a proxy listening on host (a free port) and
// relaying to prometheusURL without faults; the caller closes it. A real
// node's pods reach it when host is the node's address.
func NewPrometheusProxy(prometheusURL, host string) (*PrometheusProxy, error) {
	target, err := url.Parse(prometheusURL)
	if err != nil {
		return nil, fmt.Errorf("parse Prometheus URL %q: %w", prometheusURL, err)
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", host, err)
	}
	p := &PrometheusProxy{changed: make(chan struct{})}
	p.relay = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			// Plain bodies, so answers can be rewritten; the transport
			// still decompresses anything Prometheus compresses.
			r.Out.Header.Del("Accept-Encoding")
		},
		ModifyResponse: p.modify,
	}
	p.srv = httptest.NewUnstartedServer(http.HandlerFunc(p.serve))
	_ = p.srv.Listener.Close()
	p.srv.Listener = l
	p.srv.Start()
	p.URL = p.srv.URL
	return p, nil
}

// Port is the port the proxy listens on.
func (p *PrometheusProxy) Port() int { return p.srv.Listener.Addr().(*net.TCPAddr).Port }

// Set changes the fault for every request from now on; Set(Fault{}) lifts it.
func (p *PrometheusProxy) Set(f Fault) {
	p.mu.Lock()
	p.fault = f
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

func (p *PrometheusProxy) current() (Fault, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault, p.changed
}

// Queries is how many instant queries the proxy has received.
func (p *PrometheusProxy) Queries() int64 { return p.queries.Load() }

// Close stops the proxy, cutting the connections it holds.
func (p *PrometheusProxy) Close() {
	p.srv.CloseClientConnections()
	p.srv.Close()
}

func isInstantQuery(path string) bool { return strings.HasSuffix(path, "/api/v1/query") }

// QueryTimes returns when the proxy received each instant query whose text
// contains substr, e.g. a namespace matcher, oldest first.
func (p *PrometheusProxy) QueryTimes(substr string) []time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []time.Time
	for _, q := range p.log {
		if strings.Contains(q.query, substr) {
			out = append(out, q.at)
		}
	}
	return out
}

// QueryLengths returns the length in bytes of each instant query whose text
// contains substr, oldest first.
func (p *PrometheusProxy) QueryLengths(substr string) []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, q := range p.log {
		if strings.Contains(q.query, substr) {
			out = append(out, len(q.query))
		}
	}
	return out
}

// logQuery records the query of r, leaving its body readable for the relay.
func (p *PrometheusProxy) logQuery(r *http.Request) {
	p.queries.Add(1)
	q := r.URL.Query().Get("query")
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		if form, perr := url.ParseQuery(string(body)); err == nil && perr == nil && form.Has("query") {
			q = form.Get("query")
		}
	}
	p.mu.Lock()
	if len(p.log) < maxLoggedQueries {
		p.log = append(p.log, loggedQuery{at: time.Now(), query: q})
	}
	p.mu.Unlock()
}

func (p *PrometheusProxy) serve(w http.ResponseWriter, r *http.Request) {
	if isInstantQuery(r.URL.Path) {
		p.logQuery(r)
	}
	f, changed := p.current()
	if f.Delay > 0 {
		select {
		case <-time.After(f.Delay):
		case <-changed:
			f, _ = p.current()
		case <-r.Context().Done():
			return
		}
	}
	if f.Status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, `{"status":"error","errorType":"internal","error":"injected by the test proxy: HTTP %d"}`, f.Status)
		return
	}
	p.relay.ServeHTTP(w, r)
}

// modify applies the body faults of the fault current when the answer
// arrives to instant-query answers.
func (p *PrometheusProxy) modify(resp *http.Response) error {
	f, _ := p.current()
	if !isInstantQuery(resp.Request.URL.Path) || (!f.Truncate && f.Value == "" && f.Shift == 0 && len(f.Warnings) == 0) {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read Prometheus answer: %w", err)
	}
	if f.Value != "" || f.Shift != 0 {
		body = rewriteSamples(body, f)
	}
	if len(f.Warnings) > 0 {
		body = addWarnings(body, f.Warnings)
	}
	if f.Truncate {
		body = body[:len(body)/2]
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Encoding")
	return nil
}

// queryAnswer is the part of a Prometheus instant-query answer the proxy rewrites.
type queryAnswer struct {
	Status string `json:"status"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

type vectorSample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// rewriteSamples sets the value and shifts the timestamp of every sample of
// a vector or scalar answer; other answers come back unchanged.
func rewriteSamples(body []byte, f Fault) []byte {
	var a queryAnswer
	if json.Unmarshal(body, &a) != nil || a.Status != "success" {
		return body
	}
	var out any
	switch a.Data.ResultType {
	case "vector":
		var vec []vectorSample
		if json.Unmarshal(a.Data.Result, &vec) != nil {
			return body
		}
		for i := range vec {
			vec[i].Value = rewriteSample(vec[i].Value, f)
		}
		out = vec
	case "scalar":
		var s [2]any
		if json.Unmarshal(a.Data.Result, &s) != nil {
			return body
		}
		out = rewriteSample(s, f)
	default:
		return body
	}
	b, err := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": a.Data.ResultType, "result": out}})
	if err != nil {
		return body
	}
	return b
}

// addWarnings adds warnings to an answer; an answer that is not a JSON object
// comes back unchanged.
func addWarnings(body []byte, warnings []string) []byte {
	var a map[string]json.RawMessage
	if json.Unmarshal(body, &a) != nil {
		return body
	}
	w, err := json.Marshal(warnings)
	if err != nil {
		return body
	}
	a["warnings"] = w
	b, err := json.Marshal(a)
	if err != nil {
		return body
	}
	return b
}

func rewriteSample(s [2]any, f Fault) [2]any {
	if ts, ok := s[0].(float64); ok && f.Shift != 0 {
		s[0] = ts + f.Shift.Seconds()
	}
	if f.Value != "" {
		s[1] = f.Value
	}
	return s
}
