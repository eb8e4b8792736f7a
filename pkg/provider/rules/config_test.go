package rules

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pmodel "github.com/prometheus/common/model"
)

func TestLoadPrometheusAdapterConfig(t *testing.T) {
	data, err := os.ReadFile("testdata/prometheus-adapter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(data)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := []int{len(cfg.Rules), len(cfg.ExternalRules)}; !cmp.Equal(got, []int{6, 2}) {
		t.Errorf("rules, externalRules = %v, want [6 2]", got)
	}
	wantFirst := DiscoveryRule{
		SeriesQuery:   `{__name__=~"^container_.*",container!="POD",namespace!="",pod!=""}`,
		SeriesFilters: []RegexFilter{},
		Resources: ResourceMapping{Overrides: map[string]GroupResource{
			"namespace": {Resource: "namespace"}, "pod": {Resource: "pod"},
		}},
		Name:         NameMapping{Matches: `^container_(.*)_seconds_total$`},
		MetricsQuery: `sum(rate(<<.Series>>{<<.LabelMatchers>>,container!="POD"}[5m])) by (<<.GroupBy>>)`,
	}
	if diff := cmp.Diff(wantFirst, cfg.Rules[0]); diff != "" {
		t.Errorf("rules[0] (-want +got):\n%s", diff)
	}
	if ns := cfg.ExternalRules[1].Resources.Namespaced; ns == nil || *ns {
		t.Errorf("externalRules[1].resources.namespaced = %v, want false", ns)
	}
	if got := time.Duration(cfg.ResourceRules.Window); got != 3*time.Minute {
		t.Errorf("resourceRules.window = %v, want 3m", got)
	}
}

func TestDefaultYAMLEqualsDefault(t *testing.T) {
	cfg, err := Load([]byte(DefaultYAML))
	if err != nil {
		t.Fatalf("Load(DefaultYAML): %v", err)
	}
	if diff := cmp.Diff(Default(), cfg); diff != "" {
		t.Errorf("Default() and DefaultYAML differ (-Default +YAML):\n%s", diff)
	}
	if _, err := Compile(Default(), StaticMapper(), Limits{}); err != nil {
		t.Errorf("Compile(Default()): %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	const valid = `
- seriesQuery: '{namespace!="",pod!=""}'
  resources: {template: "<<.Resource>>"}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	tests := []struct {
		name string
		yaml string
		want []string // substrings, each must appear in the error
	}{
		{
			name: "an unknown field is an error (prometheus-adapter's sample has the typo metricQuery)",
			yaml: "rules:\n- seriesQuery: 'x'\n  metricQuery: 'count(x)'\n",
			want: []string{"rules[0].metricQuery: Forbidden: unknown field"},
		},
		{
			name: "a duplicate field is an error",
			yaml: "rules: []\nrules: []\n",
			want: []string{`"rules" already set`},
		},
		{
			name: "a bad name.matches regex names its field",
			yaml: "rules:" + valid + "- seriesQuery: 'x'\n  resources: {template: '<<.Resource>>'}\n  name: {matches: '('}\n  metricsQuery: 'x'\n",
			want: []string{"rules[1].name.matches: Invalid value"},
		},
		{
			name: "several capture groups without as names name.as",
			yaml: "rules:\n- seriesQuery: 'x'\n  name: {matches: '(a)(b)'}\n  metricsQuery: 'x'\n",
			want: []string{"rules[0].name.as: Invalid value", "as is required"},
		},
		{
			name: "a bad metricsQuery template names its field",
			yaml: "rules:\n- seriesQuery: 'x'\n  metricsQuery: 'sum(<<.Series>'\n",
			want: []string{"rules[0].metricsQuery: Invalid value"},
		},
		{
			name: "a metricsQuery using an unknown field fails at load time",
			yaml: "externalRules:\n- seriesQuery: 'x'\n  metricsQuery: 'sum(<<.Serise>>)'\n",
			want: []string{"externalRules[0].metricsQuery: Invalid value", "Serise"},
		},
		{
			name: "a missing metricsQuery and seriesQuery are required",
			yaml: "rules:\n- name: {as: x}\n",
			want: []string{"rules[0].seriesQuery: Required value", "rules[0].metricsQuery: Required value"},
		},
		{
			name: "a bad seriesQuery names its field",
			yaml: "rules:\n- seriesQuery: '{namespace=\"a\"'\n  metricsQuery: x\n",
			want: []string{"rules[0].seriesQuery: Invalid value"},
		},
		{
			name: "a filter with both is and isNot, and one with a bad regex, each name their field",
			yaml: "rules:\n- seriesQuery: 'x'\n  seriesFilters: [{is: a, isNot: b}, {isNot: '['}, {}]\n  metricsQuery: x\n",
			want: []string{"rules[0].seriesFilters[0]: Invalid value", "rules[0].seriesFilters[1].isNot: Invalid value", "rules[0].seriesFilters[2]: Required value"},
		},
		{
			name: "a resource template without .Resource names its field",
			yaml: "rules:\n- seriesQuery: 'x'\n  resources: {template: 'kube_<<.Group>>'}\n  metricsQuery: x\n",
			want: []string{"rules[0].resources.template: Invalid value", "<<.Resource>>"},
		},
		{
			name: "an override label that is no Prometheus label names its key",
			yaml: "rules:\n- seriesQuery: 'x'\n  resources: {overrides: {'app.kubernetes.io/name': {resource: deployment}, pod: {}}}\n  metricsQuery: x\n",
			want: []string{"rules[0].resources.overrides[app.kubernetes.io/name]: Invalid value", "rules[0].resources.overrides[pod].resource: Required value"},
		},
		{
			name: "resource rules need queries, a container label and a window",
			yaml: "resourceRules:\n  cpu: {containerQuery: x, nodeQuery: x, containerLabel: container}\n  memory: {nodeQuery: '<<.Nope>>'}\n",
			want: []string{"resourceRules.memory.containerQuery: Required value", "resourceRules.memory.nodeQuery: Invalid value", "resourceRules.memory.containerLabel: Invalid value", "resourceRules.window: Invalid value"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkLoadFails(t, tc.yaml, tc.want) })
	}
}

func TestValidateReturnsEveryErrorWithItsPath(t *testing.T) {
	cfg := &Config{
		Rules: []DiscoveryRule{
			{SeriesQuery: "x", MetricsQuery: "x"},
			{SeriesQuery: "x", Name: NameMapping{Matches: "("}, MetricsQuery: "<<"},
		},
		ResourceRules: &ResourceRules{
			CPU:    ResourceRule{ContainerQuery: "x", NodeQuery: "x", ContainerLabel: "container"},
			Memory: ResourceRule{ContainerQuery: "x", NodeQuery: "x", ContainerLabel: "container"},
			Window: pmodel.Duration(time.Minute),
		},
	}
	var got []string
	for _, e := range cfg.Validate() {
		got = append(got, e.Field)
	}
	want := []string{"rules[1].name.matches", "rules[1].metricsQuery"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("error fields (-want +got):\n%s", diff)
	}
}

// checkLoadFails checks that Load refuses yaml with an error containing each of want.
func checkLoadFails(t *testing.T, yaml string, want []string) {
	t.Helper()
	_, err := Load([]byte(yaml))
	if err == nil {
		t.Fatal("Load succeeded, want an error")
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}
