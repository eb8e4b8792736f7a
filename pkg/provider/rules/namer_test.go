package rules

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	podsGR        = schema.GroupResource{Resource: "pods"}
	namespacesGR  = schema.GroupResource{Resource: "namespaces"}
	servicesGR    = schema.GroupResource{Resource: "services"}
	jobsGR        = schema.GroupResource{Group: "batch", Resource: "jobs"}
	deploymentsGR = schema.GroupResource{Group: "apps", Resource: "deployments"}
)

// served is which rule (by index) serves a series, and how.
type served struct {
	Rule int
	Info SeriesInfo
}

func describeAll(rules []*Rule, s Series) []served {
	var out []served
	for i, r := range rules {
		if info, ok := r.Describe(s); ok {
			out = append(out, served{Rule: i, Info: info})
		}
	}
	return out
}

func mustCompile(t *testing.T, cfg *Config) *RuleSet {
	t.Helper()
	set, err := Compile(cfg, StaticMapper(), Limits{})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return set
}

func loadTestdata(t *testing.T) *RuleSet {
	t.Helper()
	data, err := os.ReadFile("testdata/prometheus-adapter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	return mustCompile(t, cfg)
}

// podSeries is a per-pod series in namespace ns.
func podSeries(name string, extra ...string) Series {
	labels := map[string]string{"namespace": "ns", "pod": "p"}
	for i := 0; i+1 < len(extra); i += 2 {
		labels[extra[i]] = extra[i+1]
	}
	return Series{Name: name, Labels: labels}
}

func podAndNamespace(others ...ResourceInfo) []ResourceInfo {
	out := []ResourceInfo{{GroupResource: namespacesGR}, {GroupResource: podsGR, Namespaced: true}}
	return append(out, others...)
}

func TestDescribePrometheusAdapterConfigNamesLikePrometheusAdapter(t *testing.T) {
	set := loadTestdata(t)
	tests := []struct {
		name   string
		series Series
		want   []served
	}{
		{
			name:   "cAdvisor seconds counter drops container_ and _seconds_total: container_cpu_usage_seconds_total is cpu_usage",
			series: podSeries("container_cpu_usage_seconds_total", "container", "app"),
			want:   []served{{0, SeriesInfo{Series: "container_cpu_usage_seconds_total", Metric: "cpu_usage", Namespaced: true, Resources: podAndNamespace()}}},
		},
		{
			name:   "other cAdvisor counters drop container_ and _total",
			series: podSeries("container_network_receive_bytes_total"),
			want:   []served{{1, SeriesInfo{Series: "container_network_receive_bytes_total", Metric: "network_receive_bytes", Namespaced: true, Resources: podAndNamespace()}}},
		},
		{
			name:   "cAdvisor gauges drop container_",
			series: podSeries("container_memory_working_set_bytes"),
			want:   []served{{2, SeriesInfo{Series: "container_memory_working_set_bytes", Metric: "memory_working_set_bytes", Namespaced: true, Resources: podAndNamespace()}}},
		},
		{
			name:   "the seriesQuery container!=\"POD\" excludes pause-container series",
			series: podSeries("container_memory_working_set_bytes", "container", "POD"),
		},
		{
			name:   "an application counter X_total is X_per_second, on every resource the template names",
			series: podSeries("http_requests_total", "service", "web"),
			want: []served{{4, SeriesInfo{Series: "http_requests_total", Metric: "http_requests_per_second", Namespaced: true,
				Resources: podAndNamespace(ResourceInfo{GroupResource: servicesGR, Namespaced: true})}}},
		},
		{
			name:   "an application gauge keeps its name; the template takes a job label for batch/jobs, as prometheus-adapter does",
			series: podSeries("queue_length", "job", "scraper", "instance", "10.0.0.1:80"),
			want: []served{{3, SeriesInfo{Series: "queue_length", Metric: "queue_length", Namespaced: true,
				Resources: []ResourceInfo{{GroupResource: jobsGR, Namespaced: true}, {GroupResource: namespacesGR}, {GroupResource: podsGR, Namespaced: true}}}}},
		},
		{
			name:   "an application seconds counter is excluded by isNot .*_seconds_total",
			series: podSeries("request_seconds_total"),
		},
		{
			name:   "name.as renames one metric, and an override maps a label to apps/deployments",
			series: Series{Name: "checkout_backlog", Labels: map[string]string{"tier": "web", "namespace": "shop", "microservice": "cart"}},
			want: []served{
				{3, SeriesInfo{Series: "checkout_backlog", Metric: "checkout_backlog", Namespaced: true, Resources: []ResourceInfo{{GroupResource: namespacesGR}}}},
				{5, SeriesInfo{Series: "checkout_backlog", Metric: "checkout_queue", Namespaced: true,
					Resources: []ResourceInfo{{GroupResource: deploymentsGR, Namespaced: true}, {GroupResource: namespacesGR}}}},
			},
		},
		{
			name:   "a series outside the seriesQuery is not served",
			series: Series{Name: "checkout_backlog", Labels: map[string]string{"tier": "api", "microservice": "cart"}},
		},
		{
			name:   "a series whose labels name no resource is not served",
			series: Series{Name: "up", Labels: map[string]string{"job": "", "instance": "a"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, describeAll(set.Custom, tc.series)); diff != "" {
				t.Errorf("served (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDescribeDefaultRules(t *testing.T) {
	set := mustCompile(t, Default())
	tests := []struct {
		name     string
		series   Series
		custom   []served
		external []served
	}{
		{
			name:     "seed: the counter zdns_vanguard_queries_total is served as zdns_vanguard_qps",
			series:   podSeries("zdns_vanguard_queries_total"),
			custom:   []served{{0, SeriesInfo{Series: "zdns_vanguard_queries_total", Metric: "zdns_vanguard_qps", Namespaced: true, Resources: podAndNamespace()}}},
			external: []served{{0, SeriesInfo{Series: "zdns_vanguard_queries_total", Metric: "zdns_vanguard_qps", Namespaced: true}}},
		},
		{
			name:     "seed: the gauge zdns_vanguard_qps is served as zdns_vanguard_qps",
			series:   podSeries("zdns_vanguard_qps"),
			custom:   []served{{2, SeriesInfo{Series: "zdns_vanguard_qps", Metric: "zdns_vanguard_qps", Namespaced: true, Resources: podAndNamespace()}}},
			external: []served{{2, SeriesInfo{Series: "zdns_vanguard_qps", Metric: "zdns_vanguard_qps", Namespaced: true}}},
		},
		{
			name:     "another counter X_total is served as X_per_second",
			series:   podSeries("http_requests_total"),
			custom:   []served{{1, SeriesInfo{Series: "http_requests_total", Metric: "http_requests_per_second", Namespaced: true, Resources: podAndNamespace()}}},
			external: []served{{1, SeriesInfo{Series: "http_requests_total", Metric: "http_requests_per_second", Namespaced: true}}},
		},
		{
			name:   "a histogram bucket is not served",
			series: podSeries("request_duration_seconds_bucket", "le", "0.1"),
		},
		{
			name:   "a gauge with a namespace but no pod is served for its namespace and as external",
			series: Series{Name: "queue_depth", Labels: map[string]string{"namespace": "ns", "queue": "q"}},
			custom: []served{{3, SeriesInfo{Series: "queue_depth", Metric: "queue_depth", Namespaced: true,
				Resources: []ResourceInfo{{GroupResource: namespacesGR}}}}},
			external: []served{{2, SeriesInfo{Series: "queue_depth", Metric: "queue_depth", Namespaced: true}}},
		},
		{
			name:   "a series without a namespace is not served",
			series: Series{Name: "up", Labels: map[string]string{"job": "node"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.custom, describeAll(set.Custom, tc.series)); diff != "" {
				t.Errorf("custom (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.external, describeAll(set.External, tc.series)); diff != "" {
				t.Errorf("external (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMetricNameDefaults(t *testing.T) {
	tests := []struct {
		name   string
		naming NameMapping
		series string
		want   string
		ok     bool
	}{
		{"empty matches and as keep the whole name", NameMapping{}, "foo_bytes", "foo_bytes", true},
		{"no capture group: as defaults to $0, the match", NameMapping{Matches: "bytes$"}, "foo_bytes", "bytes", true},
		{"one capture group: as defaults to $1", NameMapping{Matches: "^(.*)_total$"}, "http_requests_total", "http_requests", true},
		{"as expands ${1}", NameMapping{Matches: "^(.*)_total$", As: "${1}_per_second"}, "http_requests_total", "http_requests_per_second", true},
		{"as expands named groups", NameMapping{Matches: "^(?P<base>.*)_queries_total$", As: "${base}_qps"}, "zdns_vanguard_queries_total", "zdns_vanguard_qps", true},
		{"matches is unanchored, as in prometheus-adapter", NameMapping{Matches: "requests_total", As: "rps"}, "http_requests_total_x", "rps", true},
		{"a constant as renames the metric", NameMapping{As: "cheesy_goodness"}, "cheddar", "cheesy_goodness", true},
		{"a name that does not match is not served", NameMapping{Matches: "^(.*)_total$"}, "queue_length", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rule, err := compileRule(DiscoveryRule{SeriesQuery: "{a!=\"\"}", Name: tc.naming, MetricsQuery: "x"}, StaticMapper(), true, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			got, ok := rule.MetricName(tc.series)
			if diff := cmp.Diff([]any{tc.want, tc.ok}, []any{got, ok}); diff != "" {
				t.Errorf("MetricName (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceMapping(t *testing.T) {
	tests := []struct {
		name      string
		mapping   ResourceMapping
		labels    []string
		want      []schema.GroupResource
		wantLabel map[schema.GroupResource]string
	}{
		{
			name:      "overrides map labels to normalized plural group-resources and back",
			mapping:   ResourceMapping{Overrides: map[string]GroupResource{"kube_ns": {Resource: "namespace"}, "svc": {Resource: "services"}}},
			labels:    []string{"kube_ns", "svc", "pod"},
			want:      []schema.GroupResource{namespacesGR, servicesGR},
			wantLabel: map[schema.GroupResource]string{namespacesGR: "kube_ns", servicesGR: "svc"},
		},
		{
			name:      "template <<.Resource>> maps singular resource labels; unknown labels are skipped",
			mapping:   ResourceMapping{Template: "<<.Resource>>"},
			labels:    []string{"pod", "namespace", "instance", "le"},
			want:      []schema.GroupResource{namespacesGR, podsGR},
			wantLabel: map[schema.GroupResource]string{podsGR: "pod", deploymentsGR: "deployment"},
		},
		{
			name:      "template kube_<<.Group>>_<<.Resource>> carries the group, with dots as underscores",
			mapping:   ResourceMapping{Template: "kube_<<.Group>>_<<.Resource>>"},
			labels:    []string{"kube_apps_deployment", "deployment"},
			want:      []schema.GroupResource{deploymentsGR},
			wantLabel: map[schema.GroupResource]string{deploymentsGR: "kube_apps_deployment", {Group: "networking.k8s.io", Resource: "ingresses"}: "kube_networking_k8s_io_ingress"},
		},
		{
			name:      "an override wins over the template",
			mapping:   ResourceMapping{Template: "<<.Resource>>", Overrides: map[string]GroupResource{"exported_pod": {Resource: "pod"}}},
			labels:    []string{"exported_pod"},
			want:      []schema.GroupResource{podsGR},
			wantLabel: map[schema.GroupResource]string{podsGR: "exported_pod", namespacesGR: "namespace"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rm, err := compileResourceMapping(tc.mapping, StaticMapper())
			if err != nil {
				t.Fatal(err)
			}
			got, _ := rm.resourcesForLabels(tc.labels)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resources (-want +got):\n%s", diff)
			}
			gotLabels := map[schema.GroupResource]string{}
			for gr := range tc.wantLabel {
				if gotLabels[gr], err = rm.labelForResource(gr); err != nil {
					t.Errorf("labelForResource(%s): %v", gr, err)
				}
			}
			if diff := cmp.Diff(tc.wantLabel, gotLabels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileOverrideUnknownToMapperNamesItsRule(t *testing.T) {
	cfg := &Config{Rules: []DiscoveryRule{{
		SeriesQuery:  "cheddar",
		Resources:    ResourceMapping{Overrides: map[string]GroupResource{"brand": {Group: "cheese.io", Resource: "brand"}}},
		MetricsQuery: "x",
	}}}
	_, err := Compile(cfg, StaticMapper(), Limits{})
	if err == nil || !containsAll(err.Error(), "rules[0]", "resources.overrides[brand]", "cheese.io") {
		t.Errorf("Compile error = %v, want one naming rules[0] resources.overrides[brand]", err)
	}
}
