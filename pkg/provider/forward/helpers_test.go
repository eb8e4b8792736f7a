package forward

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// podpilotToken is podpilot's own bearer token in the tests: forwarded requests carry it.
const podpilotToken = "podpilot-own-token"

// fakeLocal plays podpilot's own provider: it serves the metrics in served.
type fakeLocal struct {
	served   map[string]*external_metrics.ExternalMetricValueList
	unserved error // what ServesExternal returns for other metrics
	calls    []string
}

func (f *fakeLocal) GetExternalMetric(_ context.Context, _ string, _ labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	f.calls = append(f.calls, info.Metric)
	if v, ok := f.served[info.Metric]; ok {
		return v, nil
	}
	return nil, f.unserved
}

func (f *fakeLocal) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	var out []provider.ExternalMetricInfo
	for _, m := range sets.List(sets.KeySet(f.served)) {
		out = append(out, provider.ExternalMetricInfo{Metric: m})
	}
	return out
}

func (f *fakeLocal) ServesExternal(metric string) (bool, error) {
	if _, ok := f.served[metric]; ok {
		return true, nil
	}
	return false, f.unserved
}

var _ Local = (*fakeLocal)(nil)

// otherAdapter is an httptest TLS server playing the other adapter: it answers every request
// with answer and records what it received.
type otherAdapter struct {
	srv    *httptest.Server
	caFile string
	mu     sync.Mutex
	got    []*http.Request
}

func newOtherAdapter(t *testing.T, answer http.HandlerFunc) *otherAdapter {
	t.Helper()
	o := &otherAdapter{}
	o.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.got = append(o.got, r.Clone(context.WithoutCancel(r.Context())))
		o.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(o.srv.Close)
	o.caFile = writeCA(t, o.srv)
	return o
}

// requests returns the requests received so far.
func (o *otherAdapter) requests() []*http.Request {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]*http.Request(nil), o.got...)
}

// writeCA writes srv's certificate as a PEM CA file.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.crt")
	data := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newTestProvider builds a forwarding Provider to url trusting caFile, with authz and a fresh
// registry.
func newTestProvider(t *testing.T, local Local, url, caFile string, authz authorizer.Authorizer) (*Provider, metrics.KubeRegistry) {
	t.Helper()
	reg := metrics.NewKubeRegistry()
	opts := NewOptions()
	opts.URL, opts.CAFile = url, caFile
	p, err := New(Config{Options: *opts, Local: local, Authorizer: authz, Own: &rest.Config{BearerToken: podpilotToken}, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	return p, reg
}

// allow and deny are authorizers recording what they were asked.
type recordingAuthz struct {
	decision authorizer.Decision
	asked    []authorizer.Attributes
}

func (a *recordingAuthz) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	a.asked = append(a.asked, attrs)
	return a.decision, "no RBAC rule", nil
}

// callerContext is the context the API server gives GetExternalMetric for the caller's GET of
// path (with its query), as the request-info filter derives it.
func callerContext(t *testing.T, caller, path string) context.Context {
	t.Helper()
	req := httptestRequest(t, path)
	f := &request.RequestInfoFactory{APIPrefixes: sets.NewString("apis", "api"), GrouplessAPIPrefixes: sets.NewString("api")}
	info, err := f.NewRequestInfo(req)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithRequestInfo(t.Context(), info)
	ctx = request.WithNamespace(ctx, info.Namespace)
	return request.WithUser(ctx, &user.DefaultInfo{Name: caller})
}

func httptestRequest(t *testing.T, path string) *http.Request {
	t.Helper()
	return httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
}
