//go:build backends

package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// discoveryTenant is the fixed tenant of the gateway's backend: series discovery only.
const discoveryTenant = "platform"

// tenantGatewayCall is one call the tenant gateway saw.
type tenantGatewayCall struct {
	path, tenant, query string
	refused             string // why the gateway refused it; empty when forwarded
}

// tenantGateway stands in front of the tier's backend as a Mimir-style multi-tenant gateway
// that the test owns: every call must carry X-Scope-OrgID; the discovery tenant may only list
// series; a namespace's tenant may only run queries whose every namespace matcher is
// namespace="<tenant>" (and there is one), which is what its series would be in Mimir. A call
// breaking that is answered 403 and recorded as refused; the others are forwarded.
type tenantGateway struct {
	srv   *httptest.Server
	relay *httputil.ReverseProxy

	mu    sync.Mutex
	calls []tenantGatewayCall
}

func newTenantGateway(t *testing.T, backendURL string) *tenantGateway {
	t.Helper()
	target, err := url.Parse(backendURL)
	if err != nil {
		t.Fatal(err)
	}
	g := &tenantGateway{relay: &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Del("X-Scope-OrgID")
	}}}
	g.srv = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.srv.Close)
	return g
}

var namespaceMatchers = regexp.MustCompile(`namespace\s*(=~|!~|!=|=)\s*"([^"]*)"`)

// refusal says why tenant may not make a call to path with query; empty: it may.
func refusal(path, tenant, query string) string {
	switch {
	case tenant == "":
		return "no X-Scope-OrgID"
	case strings.HasSuffix(path, "/api/v1/series"):
		if tenant != discoveryTenant {
			return "series listed with a namespace's tenant"
		}
		return ""
	case tenant == discoveryTenant:
		return "values read with the discovery tenant"
	}
	ms := namespaceMatchers.FindAllStringSubmatch(query, -1)
	if len(ms) == 0 {
		return "a query without a namespace matcher"
	}
	for _, m := range ms {
		if m[1] != "=" || m[2] != tenant {
			return fmt.Sprintf("tenant %s asked for namespace%s%q", tenant, m[1], m[2])
		}
	}
	return ""
}

func (g *tenantGateway) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	form, _ := url.ParseQuery(string(body))
	q := r.URL.Query()
	query := strings.Join(append(append(form["query"], form["match[]"]...), append(q["query"], q["match[]"]...)...), " ")
	call := tenantGatewayCall{path: r.URL.Path, tenant: r.Header.Get("X-Scope-OrgID"), query: query}
	call.refused = refusal(call.path, call.tenant, query)
	g.mu.Lock()
	g.calls = append(g.calls, call)
	g.mu.Unlock()
	if call.refused != "" {
		http.Error(w, "tenant gateway: "+call.refused, http.StatusForbidden)
		return
	}
	g.relay.ServeHTTP(w, r)
}

func (g *tenantGateway) seen() []tenantGatewayCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]tenantGatewayCall(nil), g.calls...)
}

// tenantRules serves zbk_tenant_qps from the gateway's backend, a tenant per namespace.
const tenantRules = `backends:
- name: mimir
  url: %s
  tenant: ` + discoveryTenant + `
  tenantFromNamespace: true
rules:
- seriesQuery: '{__name__="zbk_tenant_qps",namespace!="",pod!=""}'
  backend: mimir
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`

// TestBackendTenantPerNamespace: two namespaces' PodAutoscalers scale on one metric served from a
// backend with tenantFromNamespace, behind a gateway that refuses any call of one namespace's
// tenant that reaches for another namespace's series. Each scales on its own load (A to 2, B to
// 4 replicas), every query carries the tenant of the namespace it reads, discovery the fixed
// tenant, and the gateway refuses nothing.
func TestBackendTenantPerNamespace(t *testing.T) {
	ctx := t.Context()
	gw := newTenantGateway(t, cluster.BackendURL)
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(fmt.Sprintf(tenantRules, gw.srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	// The rules have no resourceRules, so this podpilot does not serve metrics.k8s.io.
	p := takeOverServing(ctx, t, framework.CustomAndExternalAPIServices, 1, "--config="+rulesFile, shareMaxAgeArg)[0]
	exp := serveExporter(t)
	want := map[string]int32{}
	var namespaces []string
	for _, tc := range []struct {
		prefix string
		load   float64
		want   int32
	}{{"bk-tenant-a", 4000, 2}, {"bk-tenant-b", 8000, 4}} {
		ns := cluster.CreateNamespace(ctx, t, tc.prefix)
		startWorkload(ctx, t, ns, "target", 1)
		load := cluster.NewLoad(ctx, exp, ns, "target", "zbk_tenant_qps", false)
		t.Cleanup(load.Stop)
		load.Set(tc.load)
		applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 5, "zbk_tenant_qps", "2000", noScaleDownPolicy))
		want[ns] = tc.want
		namespaces = append(namespaces, ns)
	}
	for i, ns := range namespaces {
		other := namespaces[1-i]
		waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionTrue)
		cluster.WaitReplicas(ctx, t, 3*time.Minute, "Deployment", ns, "target", want[ns])
		a, err := directGet(ctx, p, podsMetricPath(ns, "zbk_tenant_qps"))
		if err != nil {
			t.Fatal(err)
		}
		if a.code != http.StatusOK || !strings.Contains(a.body, `"namespace":"`+ns+`"`) || strings.Contains(a.body, other) {
			t.Errorf("custom metrics API for %s answered %d %.500s, want its own pods only, none of %s", ns, a.code, a.body, other)
		}
	}
	queries := map[string]int{}
	for _, c := range gw.seen() {
		if c.refused != "" {
			t.Errorf("the gateway refused %s with tenant %q (%s): %.300s", c.path, c.tenant, c.refused, c.query)
		}
		if strings.HasSuffix(c.path, "/api/v1/query") {
			queries[c.tenant]++
		}
	}
	for _, ns := range namespaces {
		if queries[ns] == 0 {
			t.Errorf("no query with tenant %s reached the gateway (queries by tenant: %v)", ns, queries)
		}
	}
	reportBackend(t, "tenant-per-namespace", "%d calls through the tenant gateway, queries by tenant %v, 0 refused; replicas %v",
		len(gw.seen()), queries, want)
}
