package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// TestQueryRendering renders each request's value query and its last-sample query: the newest
// timestamp of the raw series, matched as the value query matches them.
func TestQueryRendering(t *testing.T) {
	def := mustCompile(t, Default())
	adapter := loadTestdata(t)
	tests := []struct {
		name           string
		rule           *Rule
		req            ObjectRequest
		want, wantLast string
	}{
		{
			name:     "seed: several pods are matched with an anchored alternation and rated over 1m",
			rule:     def.Custom[0],
			req:      ObjectRequest{Series: "zdns_vanguard_queries_total", Resource: podsGR, Namespace: "dns", Names: []string{"a", "b"}},
			want:     `sum(rate(zdns_vanguard_queries_total{namespace="dns",pod=~"a|b"}[1m])) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_queries_total{namespace="dns",pod=~"a|b"}))`,
		},
		{
			name:     "one object is matched with =",
			rule:     def.Custom[2],
			req:      ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", Names: []string{"a"}},
			want:     `sum(zdns_vanguard_qps{namespace="dns",pod="a"}) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_qps{namespace="dns",pod="a"}))`,
		},
		{
			name:     "a namespace object is root-scoped and grouped by the namespace label",
			rule:     def.Custom[0],
			req:      ObjectRequest{Series: "zdns_vanguard_queries_total", Resource: namespacesGR, Names: []string{"dns"}},
			want:     `sum(rate(zdns_vanguard_queries_total{namespace="dns"}[1m])) by (namespace)`,
			wantLast: `max(timestamp(zdns_vanguard_queries_total{namespace="dns"}))`,
		},
		{
			name: "the metric label selector comes first, then namespace, then names",
			rule: def.Custom[2],
			req: ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", Names: []string{"a"},
				Selector: mustSelector(t, "zone=eu,tier in (web,api),!canary,shard")},
			want:     `sum(zdns_vanguard_qps{canary="",shard!="",tier=~"api|web",zone="eu",namespace="dns",pod="a"}) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_qps{canary="",shard!="",tier=~"api|web",zone="eu",namespace="dns",pod="a"}))`,
		},
		{
			name:     "AllObjects matches any object of the resource with label!=\"\"",
			rule:     def.Custom[2],
			req:      ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", AllObjects: true},
			want:     `sum(zdns_vanguard_qps{namespace="dns",pod!=""}) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_qps{namespace="dns",pod!=""}))`,
		},
		{
			name:     "names with regex metacharacters are quoted, so a dotted name matches only itself",
			rule:     def.Custom[2],
			req:      ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", Names: []string{"a.b", "c"}},
			want:     `sum(zdns_vanguard_qps{namespace="dns",pod=~"a\\.b|c"}) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_qps{namespace="dns",pod=~"a\\.b|c"}))`,
		},
		{
			name:     "prometheus-adapter template rule: the resource label comes from the template",
			rule:     adapter.Custom[4],
			req:      ObjectRequest{Series: "http_requests_total", Resource: servicesGR, Namespace: "shop", Names: []string{"web"}},
			want:     `sum(rate(http_requests_total{namespace="shop",service="web"}[2m])) by (service)`,
			wantLast: `max(timestamp(http_requests_total{namespace="shop",service="web"}))`,
		},
		{
			name:     "prometheus-adapter override rule: the resource label comes from the override",
			rule:     adapter.Custom[5],
			req:      ObjectRequest{Series: "checkout_backlog", Resource: deploymentsGR, Namespace: "shop", Names: []string{"cart"}},
			want:     `max(checkout_backlog{namespace="shop",microservice="cart"}) by (microservice)`,
			wantLast: `max(timestamp(checkout_backlog{namespace="shop",microservice="cart"}))`,
		},
		{
			name:     "a rated counter's last sample is its raw series' newest timestamp, not the rate's",
			rule:     def.Custom[0],
			req:      ObjectRequest{Series: "zdns_vanguard_queries_total", Resource: podsGR, Namespace: "dns", AllObjects: true},
			want:     `sum(rate(zdns_vanguard_queries_total{namespace="dns",pod!=""}[1m])) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_queries_total{namespace="dns",pod!=""}))`,
		},
		{
			name:     "AllObjects with a names pattern selects only the objects whose whole name matches it, in the series selector",
			rule:     def.Custom[2],
			req:      ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", AllObjects: true, NamesPattern: `web-[a-z0-9]+-[a-z0-9]+`},
			want:     `sum(zdns_vanguard_qps{namespace="dns",pod=~"web-[a-z0-9]+-[a-z0-9]+"}) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_qps{namespace="dns",pod=~"web-[a-z0-9]+-[a-z0-9]+"}))`,
		},
		{
			name: "the metric selector narrows all objects' series",
			rule: def.Custom[2],
			req: ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", AllObjects: true,
				Selector: mustSelector(t, "zone=eu")},
			want:     `sum(zdns_vanguard_qps{zone="eu",namespace="dns",pod!=""}) by (pod)`,
			wantLast: `max(timestamp(zdns_vanguard_qps{zone="eu",namespace="dns",pod!=""}))`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rule.Query(tc.req)
			checkRendered(t, "Query", got, err, tc.want)
			got, err = tc.rule.LastSampleQuery(tc.req)
			checkRendered(t, "LastSampleQuery", got, err, tc.wantLast)
		})
	}
}

// checkRendered fails t unless a query rendered want without error.
func checkRendered(t *testing.T, what, got string, err error, want string) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func TestQueryTemplateFieldsMatchPrometheusAdapter(t *testing.T) {
	cfg := &Config{Rules: []DiscoveryRule{{
		SeriesQuery: `{namespace!="",pod!=""}`,
		Resources:   ResourceMapping{Template: "<<.Resource>>"},
		MetricsQuery: `<<.Series>>|<<.LabelMatchers>>|<<.GroupBy>>|<<range .GroupBySlice>>[<<.>>]<<end>>|` +
			`<<.LabelValuesByName.pod>>|<<.LabelValuesByName.namespace>>|<<.LabelValuesByName.app>>`,
	}}}
	rule := mustCompile(t, cfg).Custom[0]
	got, err := rule.Query(ObjectRequest{Series: "s", Resource: podsGR, Namespace: "n\"s", Names: []string{"a.b", "c"},
		Selector: mustSelector(t, "app=web")})
	if err != nil {
		t.Fatal(err)
	}
	want := `s|app="web",namespace="n\"s",pod=~"a\\.b|c"|pod|[pod]|a\\.b|c|n\"s|web`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered fields (-want +got):\n%s", diff)
	}
}

// TestExternalQueryRendering renders each request's external value query and its last-sample
// query, matched as the value query matches.
func TestExternalQueryRendering(t *testing.T) {
	def := mustCompile(t, Default())
	adapter := loadTestdata(t)
	tests := []struct {
		name           string
		rule           *Rule
		req            ExternalRequest
		want, wantLast string
	}{
		{
			name: "default external rule: the namespace and selector are matched and summed to one value; " +
				"the last sample is the raw series' newest timestamp, not the rate's",
			rule:     def.External[0],
			req:      ExternalRequest{Series: "zdns_vanguard_queries_total", Namespace: "dns", Selector: mustSelector(t, "zone=eu")},
			want:     `sum(rate(zdns_vanguard_queries_total{zone="eu",namespace="dns"}[1m]))`,
			wantLast: `max(timestamp(zdns_vanguard_queries_total{zone="eu",namespace="dns"}))`,
		},
		{
			name:     "an external rule without resources is namespaced on the namespace label (prometheus-adapter fails here)",
			rule:     adapter.External[0],
			req:      ExternalRequest{Series: "queue_consumer_lag", Namespace: "ns", Selector: mustSelector(t, "name in (orders,payments)")},
			want:     `sum(queue_consumer_lag{name=~"orders|payments",namespace="ns"}) by (name)`,
			wantLast: `max(timestamp(queue_consumer_lag{name=~"orders|payments",namespace="ns"}))`,
		},
		{
			name:     "namespaced: false ignores the request's namespace",
			rule:     adapter.External[1],
			req:      ExternalRequest{Series: "queue_depth", Namespace: "ns"},
			want:     `sum(queue_depth{}) by (name)`,
			wantLast: `max(timestamp(queue_depth{}))`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.rule.ExternalQuery(tc.req)
			checkRendered(t, "ExternalQuery", got, err, tc.want)
			got, err = tc.rule.ExternalLastSampleQuery(tc.req)
			checkRendered(t, "ExternalLastSampleQuery", got, err, tc.wantLast)
		})
	}
	t.Run("an invalid series name is refused by both queries", func(t *testing.T) {
		req := ExternalRequest{Series: "bad name{"}
		if _, err := def.External[0].ExternalQuery(req); !errors.Is(err, ErrInvalidSeriesName) {
			t.Errorf("ExternalQuery error = %v, want %v", err, ErrInvalidSeriesName)
		}
		if _, err := def.External[0].ExternalLastSampleQuery(req); !errors.Is(err, ErrInvalidSeriesName) {
			t.Errorf("ExternalLastSampleQuery error = %v, want %v", err, ErrInvalidSeriesName)
		}
	})
}

func TestResourceQueries(t *testing.T) {
	res := loadTestdata(t).Resource
	cpu, err := res.CPU.ContainerQuery(ObjectRequest{Resource: podsGR, Namespace: "ns", Names: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	wantCPU := "sum by (pod,container) (\n  rate(container_cpu_usage_seconds_total{container!=\"\",namespace=\"ns\",pod=~\"a|b\"}[3m])\n)\n"
	if diff := cmp.Diff(wantCPU, cpu); diff != "" {
		t.Errorf("cpu container query: container queries group by the pod and container labels (-want +got):\n%s", diff)
	}
	mem, err := res.Memory.NodeQuery(ObjectRequest{Resource: schema.GroupResource{Resource: "nodes"}, Names: []string{"n1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mem, `node_memory_MemTotal_bytes{node="n1"}[3m]`) || !strings.HasPrefix(mem, "sum by (node) (") {
		t.Errorf("memory node query: node queries group by the node label; got %q", mem)
	}
	if diff := cmp.Diff([]any{"container", int64(180)}, []any{res.CPU.ContainerLabel(), int64(res.Window.Seconds())}); diff != "" {
		t.Errorf("container label, window (-want +got):\n%s", diff)
	}
}

func TestQueryErrors(t *testing.T) {
	rule := mustCompile(t, Default()).Custom[2]
	base := ObjectRequest{Series: "zdns_vanguard_qps", Resource: podsGR, Namespace: "dns", Names: []string{"a"}}
	with := func(f func(*ObjectRequest)) ObjectRequest { r := base; f(&r); return r }
	tests := []struct {
		name string
		req  ObjectRequest
		want error
	}{
		{"gt is unsupported", with(func(r *ObjectRequest) { r.Selector = mustSelector(t, "shard>3") }), ErrUnsupportedOperator},
		{"lt is unsupported", with(func(r *ObjectRequest) { r.Selector = mustSelector(t, "shard<3") }), ErrUnsupportedOperator},
		{"a Kubernetes label key with a prefix is no Prometheus label", with(func(r *ObjectRequest) { r.Selector = mustSelector(t, "app.kubernetes.io/name=web") }), ErrInvalidLabelName},
		{"a reserved __ label is refused", with(func(r *ObjectRequest) { r.Selector = labels.SelectorFromValidatedSet(labels.Set{"__name__": "secret"}) }), ErrInvalidLabelName},
		{"no names without AllObjects is an error", with(func(r *ObjectRequest) { r.Names = nil }), ErrNoObjectNames},
		{"a series name with PromQL syntax is refused", with(func(r *ObjectRequest) { r.Series = `up} or vector(1) #` }), ErrInvalidSeriesName},
		{"a series name with a space and a brace is refused", with(func(r *ObjectRequest) { r.Series = "bad name{"; r.Names, r.AllObjects = nil, true }), ErrInvalidSeriesName},
		{"an object name that is not UTF-8 is refused", with(func(r *ObjectRequest) { r.Names = []string{"a\xff"} }), ErrInvalidValue},
		{"a names pattern that is no RE2 expression is refused", with(func(r *ObjectRequest) { r.Names, r.AllObjects, r.NamesPattern = nil, true, "web-(" }), ErrInvalidValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := rule.Query(tc.req); !errors.Is(err, tc.want) {
				t.Errorf("Query error = %v, want %v", err, tc.want)
			}
			if _, err := rule.LastSampleQuery(tc.req); !errors.Is(err, tc.want) {
				t.Errorf("LastSampleQuery error = %v, want %v", err, tc.want)
			}
		})
	}
	t.Run("an unsupported operator says so, for the 400 message", func(t *testing.T) {
		_, err := rule.Query(tests[0].req)
		if err == nil || !containsAll(err.Error(), "unsupported", "gt", "shard") {
			t.Errorf("error %v does not name the unsupported operator and label", err)
		}
	})
	t.Run("a resource the rule does not map has no label", func(t *testing.T) {
		req := with(func(r *ObjectRequest) { r.Resource = servicesGR })
		if _, err := rule.Query(req); err == nil {
			t.Error("Query for services succeeded on a pod/namespace rule")
		}
		if _, err := rule.LastSampleQuery(req); err == nil {
			t.Error("LastSampleQuery for services succeeded on a pod/namespace rule")
		}
	})
}
