package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	pmodel "github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSeparability(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	namespaces := schema.GroupResource{Resource: "namespaces"}
	tests := []struct {
		name     string
		query    string
		resource schema.GroupResource // pods unless set
		// why is empty for a separable query, else a fragment of the reason.
		why string
	}{
		// Separable: each object's value is the same whatever else is asked for.
		{name: "prometheus-adapter's default shape: LabelMatchers in the selector, summed by GroupBy",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>}[2m])) by (<<.GroupBy>>)`},
		{name: "the prefix by form and extra matchers are separable",
			query: `sum by (<<.GroupBy>>) (rate(<<.Series>>{container!="",<<.LabelMatchers>>}[3m]))`},
		{name: "a literal by (pod) is separable for pods",
			query: `max(<<.Series>>{<<.LabelMatchers>>}) by (pod, instance)`},
		{name: "a literal by (pod) is not separable for namespaces: the namespace label is grouped away",
			query: `max(<<.Series>>{<<.LabelMatchers>>}) by (pod)`, resource: namespaces, why: `groups away the object label "namespace"`},
		{name: "without keeping the object label is separable",
			query: `sum without (instance, container) (<<.Series>>{<<.LabelMatchers>>})`},
		{name: "without dropping the object label is not",
			query: `sum without (pod) (<<.Series>>{<<.LabelMatchers>>})`, why: `groups away the object label "pod"`},
		{name: "a ratio of two per-object aggregates matched on all labels is separable",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>,code=~"5.."}[1m])) by (<<.GroupBy>>) / sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>)`},
		{name: "a join on the object label is separable",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) * on(<<.GroupBy>>) group_left(node) kube_pod_info`},
		{name: "a join with on() to something independent of the objects is separable with group_left",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) / on() group_left() scalar_like_total`},
		{name: "scalars, offsets, @, subqueries, bool and histogram_quantile keep objects apart",
			query: `histogram_quantile(0.9, sum by (le, <<.GroupBy>>) (rate(<<.Series>>{<<.LabelMatchers>>}[5m] offset 1m @ end()))) > bool 2 * max_over_time(sum by (<<.GroupBy>>)(<<.Series>>{<<.LabelMatchers>>})[10m:1m])`},
		{name: "or vector(0) is separable: the fallback has no object label",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m])) by (<<.GroupBy>>) or vector(0)`},
		{name: "label_replace writing another label is separable",
			query: `label_replace(sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>), "x", "$1", "pod", "(.*)")`},
		{name: "a template that ignores the request entirely is separable (the query does not change)",
			query: `sum(up) by (pod)`},
		{name: "LabelValuesByName of another label (the namespace) is separable for pods",
			query: `sum(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",<<.LabelMatchers>>}) by (<<.GroupBy>>)`},
		{name: "a range over GroupBySlice is separable",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<range .GroupBySlice>><<.>>,<<end>>)`},
		{name: "a branch on GroupBy is analyzed for the label actually requested",
			query: `<<if eq .GroupBy "pod">>sum(<<.Series>>{<<.LabelMatchers>>}) by (pod)<<else>>sum(<<.Series>>{<<.LabelMatchers>>})<<end>>`},

		// Not separable: prometheus-adapter's per-request query is sent instead.
		{name: "LabelValuesByName of the object label in a matcher",
			query: `sum(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"}) by (pod)`,
			why:   `.LabelValuesByName "pod"`},
		{name: "LabelValuesByName of the object label in a string (published configurations do this)",
			query: `label_replace(max(<<.Series>>{base='<<index .LabelValuesByName "pod">>-base'}) by (base), "pod", "$1", "base", "(.*)-base")`,
			why:   `.LabelValuesByName "pod"`},
		{name: "LabelValuesByName read as a field",
			query: `max(<<.Series>>{pod=~"<<.LabelValuesByName.pod>>"}) by (pod)`, why: `.LabelValuesByName "pod"`},
		{name: "a join with on() whose other side sums the requested objects",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) / on() group_left() sum(<<.Series>>{<<.LabelMatchers>>})`,
			why:   "aggregates across the requested objects"},
		{name: "a one-to-one on() match fails for several objects at once",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) / on() up`, why: `on() matches across`},
		{name: "or on() lets the other side in only when no requested object has data",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) or on() kube_pod_info`, why: `"or" on()`},
		{name: "an aggregation without by",
			query: `sum(rate(<<.Series>>{<<.LabelMatchers>>}[1m]))`, why: "without by (pod)"},
		{name: "topk across objects",
			query: `topk(1, <<.Series>>{<<.LabelMatchers>>})`, why: "without by (pod)"},
		{name: "scalar() of the requested objects",
			query: `<<.Series>>{<<.LabelMatchers>>} / scalar(sum(<<.Series>>{<<.LabelMatchers>>}))`, why: "aggregates across"},
		{name: "absent() of the requested objects",
			query: `absent(<<.Series>>{<<.LabelMatchers>>})`, why: "absent() combines"},
		{name: "label_replace writing the object label",
			query: `label_replace(<<.Series>>{<<.LabelMatchers>>}, "pod", "$1", "target", "(.*)")`, why: `label_replace() may write the object label "pod"`},
		{name: "LabelMatchers inside a string",
			query: `label_replace(<<.Series>>{job="x"}, "m", "<<.LabelMatchers>>", "", "")`, why: "cannot analyze"},
		{name: "LabelMatchers tested in template logic",
			query: `<<if .LabelMatchers>>sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)<<end>>`, why: "in template logic"},
		{name: "LabelMatchers passed to a function",
			query: `sum(<<.Series>>{<<printf "%s" .LabelMatchers>>}) by (<<.GroupBy>>)`, why: "in template logic"},
		{name: "a query podpilot cannot parse is not separable",
			query: `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>) # comment`, why: "cannot analyze"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &Config{Rules: []DiscoveryRule{{
				SeriesQuery:  `{namespace!="",pod!=""}`,
				Resources:    ResourceMapping{Template: "<<.Resource>>"},
				MetricsQuery: tt.query,
			}}}
			rule := mustCompile(t, cfg).Custom[0]
			gr := tt.resource
			if gr.Resource == "" {
				gr = pods
			}
			err := rule.Separable(gr)
			switch {
			case tt.why == "" && err != nil:
				t.Fatalf("Separable = %v, want separable", err)
			case tt.why != "" && !errors.Is(err, ErrNotSeparable):
				t.Fatalf("Separable = %v, want ErrNotSeparable", err)
			case tt.why != "" && !strings.Contains(err.Error(), tt.why):
				t.Errorf("Separable = %q, want the reason to contain %q", err.Error(), tt.why)
			}
			// A request for every object fails exactly when the rule is not separable.
			_, qerr := rule.Query(ObjectRequest{Series: "x_total", Resource: gr, Namespace: "ns", AllObjects: true})
			if (qerr != nil) != (tt.why != "") || (qerr != nil && !errors.Is(qerr, ErrNotSeparable)) {
				t.Errorf("Query(AllObjects) error = %v, want ErrNotSeparable iff not separable", qerr)
			}
			if _, err := rule.Query(ObjectRequest{Series: "x_total", Resource: gr, Namespace: "ns", Names: []string{"p1"}}); err != nil {
				t.Errorf("Query by name = %v, want a query whatever the separability", err)
			}
		})
	}
}

func TestResourceQuerySeparability(t *testing.T) {
	cfg := Default()
	cfg.ResourceRules = &ResourceRules{
		Window: pmodel.Duration(3 * time.Minute),
		CPU: ResourceRule{
			ContainerQuery: `sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{container!="",<<.LabelMatchers>>}[3m]))`,
			NodeQuery:      `sum(rate(node_cpu_seconds_total{mode!="idle",<<.LabelMatchers>>}[3m]))`,
			Resources:      ResourceMapping{Overrides: map[string]GroupResource{"node": {Resource: "node"}, "namespace": {Resource: "namespace"}, "pod": {Resource: "pod"}}},
			ContainerLabel: "container",
		},
		Memory: ResourceRule{
			ContainerQuery: `sum by (<<.GroupBy>>) (container_memory_working_set_bytes{pod=~"<<index .LabelValuesByName "pod">>"})`,
			NodeQuery:      `sum by (<<.GroupBy>>) (node_memory_working_set_bytes{<<.LabelMatchers>>})`,
			Resources:      ResourceMapping{Overrides: map[string]GroupResource{"node": {Resource: "node"}, "namespace": {Resource: "namespace"}, "pod": {Resource: "pod"}}},
			ContainerLabel: "container",
		},
	}
	set := mustCompile(t, cfg)
	pods, nodes := schema.GroupResource{Resource: "pods"}, schema.GroupResource{Resource: "nodes"}
	tests := []struct {
		name      string
		query     *ResourceQuery
		gr        schema.GroupResource
		separable bool
	}{
		{name: "a container query by pod and container is separable", query: set.Resource.CPU, gr: pods, separable: true},
		{name: "a node query without by is not", query: set.Resource.CPU, gr: nodes},
		{name: "a container query reading pod names from LabelValuesByName is not", query: set.Resource.Memory, gr: pods},
		{name: "a node query by node is separable", query: set.Resource.Memory, gr: nodes, separable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.query.Separable(tt.gr)
			if (err == nil) != tt.separable {
				t.Errorf("Separable = %v, want separable %v", err, tt.separable)
			}
		})
	}
}

func TestRenderedQuerySizeIsCapped(t *testing.T) {
	set, err := Compile(Default(), StaticMapper(), Limits{MaxQueryBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	rule := set.Custom[0]
	big := strings.Repeat("v", 2<<10)
	values := make([]string, 100)
	for i := range values {
		values[i] = fmt.Sprintf("zone-%015d", i)
	}
	manyValues := mustSelector(t, "zone in ("+strings.Join(values, ",")+")")
	tests := []struct {
		name    string
		call    func() (string, error)
		wantErr bool
	}{
		{name: "a query under the limit renders", call: func() (string, error) {
			return rule.Query(ObjectRequest{Series: "x_queries_total", Resource: schema.GroupResource{Resource: "pods"}, Namespace: "ns", Names: []string{"p1"}})
		}},
		{name: "object names over the limit are refused", wantErr: true, call: func() (string, error) {
			return rule.Query(ObjectRequest{Series: "x_queries_total", Resource: schema.GroupResource{Resource: "pods"}, Namespace: "ns", Names: []string{big}})
		}},
		{name: "an external metric selector over the limit is refused", wantErr: true, call: func() (string, error) {
			return set.External[0].ExternalQuery(ExternalRequest{Series: "x_queries_total", Namespace: "ns", Selector: manyValues})
		}},
		{name: "the last-sample query has the same limit", wantErr: true, call: func() (string, error) {
			return rule.LastSampleQuery(ObjectRequest{Series: "x_queries_total", Resource: schema.GroupResource{Resource: "pods"}, Namespace: big, AllObjects: true})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := tt.call()
			if tt.wantErr {
				if !errors.Is(err, ErrQueryTooLarge) || !strings.Contains(err.Error(), "--metrics-max-query-bytes") {
					t.Fatalf("err = %v (query %d bytes), want ErrQueryTooLarge naming the flag", err, len(q))
				}
				return
			}
			if err != nil || len(q) > 1<<10 {
				t.Fatalf("query of %d bytes, err %v", len(q), err)
			}
		})
	}
}

func TestDefaultRulesAreSeparable(t *testing.T) {
	set := mustCompile(t, Default())
	checked := 0
	for i, r := range set.Custom {
		for _, gr := range []schema.GroupResource{{Resource: "pods"}, {Resource: "namespaces"}} {
			if _, err := r.LabelForResource(gr); err != nil {
				continue // the rule does not serve gr
			}
			checked++
			if err := r.Separable(gr); err != nil {
				t.Errorf("default rule %d on %s: %v; every request would send its own query", i, gr.String(), err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no default rule serves pods or namespaces")
	}
}
