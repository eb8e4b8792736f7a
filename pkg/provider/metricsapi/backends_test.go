package metricsapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// tenantCall is what a backend saw of one call: its endpoint, its X-Scope-OrgID and its
// query (or series matcher).
type tenantCall struct{ path, tenant, query string }

// tenantBackend is a real HTTP server on loopback standing in for a multi-tenant store such as
// Mimir: it answers each call from the data of the tenant its X-Scope-OrgID names, and of no
// other, and records every call. down makes it answer 503 to everything.
type tenantBackend struct {
	srv    *httptest.Server
	down   atomic.Bool
	series map[string][]model.LabelSet // by tenant
	values map[string]model.Vector     // by tenant; a query with "jobs_waiting" gets jobs[tenant]
	jobs   map[string]float64

	mu    sync.Mutex
	calls []tenantCall
}

func newTenantBackend(t *testing.T) *tenantBackend {
	t.Helper()
	b := &tenantBackend{series: map[string][]model.LabelSet{}, values: map[string]model.Vector{}, jobs: map[string]float64{}}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *tenantBackend) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	tenant := r.Header.Get(prometheus.TenantHeader)
	q := form.Get("query") + strings.Join(form["match[]"], ",")
	b.mu.Lock()
	b.calls = append(b.calls, tenantCall{path: r.URL.Path, tenant: tenant, query: q})
	b.mu.Unlock()
	if b.down.Load() {
		http.Error(w, "store down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/v1/series":
		writeData(w, b.series[tenant])
	case "/api/v1/query":
		vec := b.values[tenant]
		if strings.Contains(q, "jobs_waiting") {
			vec = model.Vector{sample(b.jobs[tenant], testNow)}
		}
		if vec == nil {
			vec = model.Vector{}
		}
		writeData(w, map[string]any{"resultType": "vector", "result": vec})
	case "/api/v1/query_range":
		writeData(w, map[string]any{"resultType": "matrix", "result": model.Matrix{}})
	default:
		http.NotFound(w, r)
	}
}

func writeData(w io.Writer, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	_, _ = fmt.Fprintf(w, `{"status":"success","data":%s}`, b)
}

// takeCalls returns the calls seen since the last take.
func (b *tenantBackend) takeCalls() []tenantCall {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.calls
	b.calls = nil
	return out
}

// multiBackendRules has a rule on the default backend, one on mimir (a tenant per namespace),
// one on flaky (no tenant), and an external rule marked namespaced: false on mimir.
const multiBackendRules = `
backends:
- name: mimir
  url: %s
  tenant: platform
  tenantFromNamespace: true
- name: flaky
  url: %s
rules:
- seriesQuery: '{__name__="requests_per_second",namespace!="",pod!=""}'
  backend: mimir
  resources: {template: "<<.Resource>>"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
- seriesQuery: '{__name__="flaky_gauge",namespace!="",pod!=""}'
  backend: flaky
  resources: {template: "<<.Resource>>"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
- seriesQuery: '{__name__="local_gauge",namespace!="",pod!=""}'
  resources: {template: "<<.Resource>>"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
externalRules:
- seriesQuery: '{__name__="jobs_waiting"}'
  backend: mimir
  resources: {namespaced: false}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>})
`

// multiBackend is a serving provider on three backends: the default one (a fakeProm), mimir
// and flaky (tenantBackends), with answers shared as a user runs it, and pods a1 in team-a and
// b1 in team-b.
type multiBackend struct {
	p            *Provider
	reg          metrics.KubeRegistry
	local        *fakeProm
	mimir, flaky *tenantBackend
}

func newMultiBackend(t *testing.T, flakyDown bool) *multiBackend {
	t.Helper()
	m := &multiBackend{mimir: newTenantBackend(t), flaky: newTenantBackend(t)}
	m.mimir.series["platform"] = []model.LabelSet{
		labelSet("requests_per_second", "namespace", "team-a", "pod", "a1"),
		labelSet("jobs_waiting", "queue", "q"),
	}
	m.mimir.values["team-a"] = model.Vector{sample(10, testNow, "namespace", "team-a", "pod", "a1")}
	m.mimir.values["team-b"] = model.Vector{sample(20, testNow, "namespace", "team-b", "pod", "b1")}
	m.mimir.values["platform"] = model.Vector{sample(99, testNow, "namespace", "team-a", "pod", "a1")}
	m.mimir.jobs = map[string]float64{"team-a": 3, "team-b": 7, "platform": 99}
	m.flaky.series[""] = []model.LabelSet{labelSet("flaky_gauge", "namespace", "team-a", "pod", "a1")}
	m.flaky.values[""] = model.Vector{sample(5, testNow, "namespace", "team-a", "pod", "a1")}
	m.flaky.down.Store(flakyDown)
	m.local = &fakeProm{
		series: map[string][]model.LabelSet{`{__name__="local_gauge",namespace!="",pod!=""}`: {labelSet("local_gauge", "namespace", "team-a", "pod", "a1")}},
		query:  answer(model.Vector{sample(1, testNow, "namespace", "team-a", "pod", "a1")}, nil),
	}
	opts := *NewOptions()
	opts.RulesFile = rulesFile(t, fmt.Sprintf(multiBackendRules, m.mimir.srv.URL, m.flaky.srv.URL))
	m.p, m.reg = multiBackendProvider(t, m.local, opts,
		pod("team-a", "a1", nil), pod("team-b", "b1", nil))
	serve(t, m.p)
	return m
}

// multiBackendProvider is providerWith plus a backend factory on real clients that record
// their metrics on the provider's registry.
func multiBackendProvider(t *testing.T, def prometheus.Client, opts Options, objs ...runtime.Object) (*Provider, metrics.KubeRegistry) {
	t.Helper()
	p, reg, err := newMultiBackendProvider(t, def, opts, objs...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, reg
}

func newMultiBackendProvider(t *testing.T, def prometheus.Client, opts Options, objs ...runtime.Object) (*Provider, metrics.KubeRegistry, error) {
	t.Helper()
	base, err := (&prometheus.Options{URL: "http://default.invalid/", Timeout: 2 * time.Second, Method: http.MethodPost}).Config()
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewKubeRegistry()
	pm, err := prometheus.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := providerConfig(t, def, opts, reg, objs...)
	cfg.Backends = func(e prometheus.Endpoint) (prometheus.TenantClient, error) {
		c, err := base.ForEndpoint(e)
		if err != nil {
			return nil, err
		}
		return prometheus.New(c, pm)
	}
	p, err := New(cfg)
	return p, reg, err
}

var namespaceMatcher = regexp.MustCompile(`namespace="([^"]*)"`)

func TestTenantPerNamespaceNeverCarriesAnotherNamespacesTenant(t *testing.T) {
	m := newMultiBackend(t, false)
	discovery := m.mimir.takeCalls()
	for _, c := range discovery {
		if c.path != "/api/v1/series" || c.tenant != "platform" {
			t.Errorf("discovery call %+v, want series calls with the fixed tenant platform", c)
		}
	}
	rps := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "requests_per_second"}
	for _, tc := range []struct{ ns, pod string }{{"team-a", "a1"}, {"team-b", "b1"}, {"team-a", "a1"}} {
		got, err := m.p.GetMetricBySelector(t.Context(), tc.ns, labels.Everything(), rps, labels.Everything())
		if err != nil {
			t.Fatalf("GetMetricBySelector(%s): %v", tc.ns, err)
		}
		if len(got.Items) != 1 || got.Items[0].DescribedObject.Name != tc.pod {
			t.Errorf("GetMetricBySelector(%s) = %+v, want only pod %s", tc.ns, got.Items, tc.pod)
		}
	}
	// An external rule marked namespaced: false sends the same query for every namespace: the
	// tenant (and the shared answer's key) is the requesting namespace's.
	for _, tc := range []struct {
		ns   string
		want int64
	}{{"team-a", 3}, {"team-b", 7}, {"team-a", 3}} {
		got, err := m.p.GetExternalMetric(t.Context(), tc.ns, labels.Everything(), provider.ExternalMetricInfo{Metric: "jobs_waiting"})
		if err != nil {
			t.Fatalf("GetExternalMetric(%s): %v", tc.ns, err)
		}
		if v := got.Items[0].Value.Value(); v != tc.want {
			t.Errorf("GetExternalMetric(%s) = %d, want %d (tenant %s's value)", tc.ns, v, tc.want, tc.ns)
		}
	}
	var got []string
	for _, c := range m.mimir.takeCalls() {
		want := "" // the tenant the call must carry: its query's namespace, or the asker's
		if ms := namespaceMatcher.FindStringSubmatch(c.query); ms != nil {
			want = ms[1]
		}
		if want != "" && c.tenant != want {
			t.Errorf("query %q for namespace %s carried tenant %q", c.query, want, c.tenant)
		}
		got = append(got, c.tenant)
	}
	// One call per distinct (tenant, query): the repeated reads reuse the shared answers.
	if diff := cmp.Diff([]string{"team-a", "team-b", "team-a", "team-b"}, got); diff != "" {
		t.Errorf("tenants of the queries sent (-want +got):\n%s", diff)
	}

	// The autoscaler's other reads (last sample, history) carry the namespace's tenant too.
	fresh := m.p.PodAutoscalerReads(nil)
	if _, err := fresh.LastSample(t.Context(), "team-b", rps, labels.Everything()); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.LastExternalSample(t.Context(), "team-a", labels.Everything(), provider.ExternalMetricInfo{Metric: "jobs_waiting"}); err != nil {
		t.Fatal(err)
	}
	hist := HistoryRequest{Namespace: "team-b", Metric: "requests_per_second", Resource: podsGR, Names: "b.*",
		Start: testNow.Add(-time.Hour), End: testNow, Step: time.Minute}
	if _, err := fresh.ObjectsHistory(t.Context(), hist); err != nil {
		t.Fatal(err)
	}
	hist.Namespace, hist.Metric = "team-a", "jobs_waiting"
	if _, err := fresh.ExternalHistory(t.Context(), hist); err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, c := range m.mimir.takeCalls() {
		got = append(got, c.path+" "+c.tenant)
	}
	want := []string{"/api/v1/query team-b", "/api/v1/query team-a", "/api/v1/query_range team-b", "/api/v1/query_range team-a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls of the last-sample and history reads (-want +got):\n%s", diff)
	}
}

func TestOneBackendDownFailsOnlyItsMetrics(t *testing.T) {
	m := newMultiBackend(t, true)
	checks := map[string]error{}
	for _, c := range m.p.BackendHealthCheckers() {
		checks[c.Name()] = c.Check(nil)
	}
	for name, want := range map[string]bool{"metrics-backend-default": true, "metrics-backend-mimir": true, "metrics-backend-flaky": false} {
		if err := checks[name]; (err == nil) != want {
			t.Errorf("check %s = %v, want ready %v", name, err, want)
		}
	}
	if err := checks["metrics-backend-flaky"]; err == nil || !strings.Contains(err.Error(), "backend flaky: 1 of 1 series queries never answered") {
		t.Errorf("check metrics-backend-flaky = %v, want it to name the backend and its series query", err)
	}
	read := func(metric string) error {
		info := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: metric}
		_, err := m.p.GetMetricBySelector(t.Context(), "team-a", labels.Everything(), info, labels.Everything())
		return err
	}
	// Never discovered: its metric may exist, so a 503 naming the backend, not a 404.
	checkStatus(t, read("flaky_gauge"), http.StatusServiceUnavailable, "backend flaky")
	checkStatus(t, read("requests_per_second"), http.StatusOK)
	checkStatus(t, read("local_gauge"), http.StatusOK)

	m.flaky.down.Store(false)
	m.p.refresh(t.Context())
	checkStatus(t, read("flaky_gauge"), http.StatusOK)
	m.flaky.down.Store(true)
	m.p.refresh(t.Context())
	m.p.clock.(interface{ Step(time.Duration) }).Step(time.Minute) // past the shared answer's max age
	// Down after it answered: its metrics answer 503 naming it; the others' do not notice.
	checkStatus(t, read("flaky_gauge"), http.StatusServiceUnavailable, "backend flaky: query", "503")
	checkStatus(t, read("requests_per_second"), http.StatusOK)
	checkStatus(t, read("local_gauge"), http.StatusOK)
	for _, c := range m.p.BackendHealthCheckers() {
		if err := c.Check(nil); err != nil {
			t.Errorf("check %s = %v after every backend answered once, want it to stay passed", c.Name(), err)
		}
	}
	want := `
# HELP podpilot_prometheus_client_request_errors_total [ALPHA] Failed calls to the Prometheus HTTP API, by backend, operation and outcome.
# TYPE podpilot_prometheus_client_request_errors_total counter
podpilot_prometheus_client_request_errors_total{backend="flaky",operation="query",outcome="unavailable"} 1
podpilot_prometheus_client_request_errors_total{backend="flaky",operation="series",outcome="unavailable"} 2
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "podpilot_prometheus_client_request_errors_total"); err != nil {
		t.Error(err)
	}
}

func TestBackendFileThatCannotBeReadNamesItsField(t *testing.T) {
	dir := t.TempDir()
	opts := *NewOptions()
	opts.RulesFile = rulesFile(t, fmt.Sprintf(`
backends:
- name: mimir
  url: http://mimir.invalid/
  bearerTokenFile: %s
  headers:
  - {name: X-Gateway-Key, file: %s}
`, filepath.Join(dir, "token"), filepath.Join(dir, "key")))
	_, _, err := newMultiBackendProvider(t, &fakeProm{}, opts)
	for _, want := range []string{"backends[0].headers[0].file: Invalid value", "backends[0].bearerTokenFile: Invalid value", "no such file"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New = %v, want an error containing %q", err, want)
		}
	}
}

// recordingTenants is a prometheus.TenantClient that only says which tenant it was made for.
type recordingTenants struct {
	prometheus.Client
	tenant string
}

func (r recordingTenants) WithTenant(tenant string) prometheus.Client {
	return recordingTenants{tenant: tenant}
}

func TestTenantOfACall(t *testing.T) {
	tenants := recordingTenants{}
	for _, tc := range []struct {
		name      string
		b         backend
		namespace string
		want      string
	}{
		{name: "a backend without tenant sends none", b: backend{client: &fakeProm{}}, namespace: "team-a", want: ""},
		{name: "a fixed tenant goes with every namespace's call", b: backend{tenants: tenants, tenant: "platform"}, namespace: "team-a", want: "platform"},
		{name: "tenantFromNamespace: a namespace's call carries that namespace", b: backend{tenants: tenants, tenant: "platform", fromNamespace: true}, namespace: "team-b", want: "team-b"},
		{name: "tenantFromNamespace: a call without namespace (discovery, cluster-scoped objects) carries the fixed tenant",
			b: backend{tenants: tenants, tenant: "platform", fromNamespace: true}, namespace: "", want: "platform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, tenant := tc.b.forNamespace(tc.namespace)
			if tenant != tc.want {
				t.Errorf("tenant = %q, want %q", tenant, tc.want)
			}
			if r, ok := c.(recordingTenants); ok && r.tenant != tc.want {
				t.Errorf("client made for tenant %q, want %q", r.tenant, tc.want)
			}
		})
	}
}

func TestReloadRebuildsBackendsAndKeepsTheLastGoodOnesOnABadFile(t *testing.T) {
	first, second := newTenantBackend(t), newTenantBackend(t)
	for _, b := range []*tenantBackend{first, second} {
		b.series[""] = []model.LabelSet{labelSet("flaky_gauge", "namespace", "team-a", "pod", "a1")}
		b.values[""] = model.Vector{sample(5, testNow, "namespace", "team-a", "pod", "a1")}
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	writeFile(t, key, "k")
	file := func(url, header string) string {
		return fmt.Sprintf(`
backends:
- name: flaky
  url: %s
  headers: [{name: X-Gateway-Key, file: %s}]
rules:
- seriesQuery: '{__name__="flaky_gauge",namespace!="",pod!=""}'
  backend: flaky
  resources: {template: "<<.Resource>>"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`, url, header)
	}
	opts := *NewOptions()
	opts.QueryCacheMaxAge = 0
	opts.RulesFile = rulesFile(t, file(first.srv.URL, key))
	p, _ := multiBackendProvider(t, &fakeProm{}, opts, pod("team-a", "a1", nil))
	serve(t, p)
	read := func() {
		t.Helper()
		info := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "flaky_gauge"}
		if _, err := p.GetMetricBySelector(t.Context(), "team-a", labels.Everything(), info, labels.Everything()); err != nil {
			t.Fatal(err)
		}
	}
	calls := func() []int { return []int{len(first.takeCalls()), len(second.takeCalls())} }
	read()
	if diff := cmp.Diff([]int{2, 0}, calls()); diff != "" { // discovery and the query
		t.Errorf("calls to (first, second) before any reload (-want +got):\n%s", diff)
	}

	writeFile(t, opts.RulesFile, file(second.srv.URL, filepath.Join(dir, "missing")))
	if p.reload(t.Context(), reloadOnSignal) {
		t.Fatal("a rule file whose header file cannot be read was loaded")
	}
	p.refresh(t.Context())
	read()
	if diff := cmp.Diff([]int{2, 0}, calls()); diff != "" {
		t.Errorf("calls to (first, second) after a bad reload, want the last good backend (-want +got):\n%s", diff)
	}

	writeFile(t, opts.RulesFile, file(second.srv.URL, key))
	if !p.reload(t.Context(), reloadOnSignal) {
		t.Fatal("a good rule file was rejected")
	}
	p.refresh(t.Context())
	read()
	if diff := cmp.Diff([]int{0, 2}, calls()); diff != "" {
		t.Errorf("calls to (first, second) after a good reload, want the new URL (-want +got):\n%s", diff)
	}
}

func TestResourceClientReadsTheResourceRulesBackend(t *testing.T) {
	flaky := newTenantBackend(t)
	flaky.values[""] = model.Vector{sample(0.5, testNow, "namespace", "team-a", "kubernetes_pod", "a1", "kubernetes_container", "app")}
	opts := *NewOptions()
	opts.RulesFile = rulesFile(t, fmt.Sprintf("backends:\n- {name: flaky, url: '%s'}\n", flaky.srv.URL)+cadvisorResourceRules+"  backend: flaky\n")
	local := &fakeProm{}
	p, _ := multiBackendProvider(t, local, opts)
	vec, err := p.ResourceClient().Query(t.Context(), "some_query", time.Time{})
	if err != nil || len(vec) != 1 || vec[0].Value != 0.5 {
		t.Errorf("ResourceClient().Query = %v, %v; want the resourceRules backend's sample", vec, err)
	}
	if got := flaky.takeCalls(); len(got) != 1 || len(local.queries) != 0 {
		t.Errorf("calls to the resourceRules backend %v, to the default %v; want one, none", got, local.queries)
	}
}
