package metricsapi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// cadvisorResourceRules are prometheus-adapter's resource rules on cAdvisor's series, the pod
// label overridden to kubernetes_pod and the container label to kubernetes_container.
const cadvisorResourceRules = `
resourceRules:
  cpu:
    containerQuery: sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{container!="",<<.LabelMatchers>>}[3m]))
    nodeQuery: sum by (<<.GroupBy>>) (rate(node_cpu_seconds_total{mode!="idle",<<.LabelMatchers>>}[3m]))
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        kubernetes_pod: {resource: pod}
    containerLabel: kubernetes_container
  memory:
    containerQuery: sum by (<<.GroupBy>>) (container_memory_working_set_bytes{container!="",<<.LabelMatchers>>})
    nodeQuery: sum by (<<.GroupBy>>) (node_memory_working_set_bytes{<<.LabelMatchers>>})
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        kubernetes_pod: {resource: pod}
    containerLabel: kubernetes_container
  window: 3m
`

func compiledResourceRules(t *testing.T, file string) *rules.ResourceQueries {
	t.Helper()
	var cfg rules.Config
	if err := yaml.UnmarshalStrict([]byte(file), &cfg); err != nil {
		t.Fatal(err)
	}
	set, err := rules.Compile(&cfg, rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return set.Resource
}

func TestResourceHistorySelectsOnlyTheTargetsPodsInPromQLThroughTheResourceRules(t *testing.T) {
	rq := compiledResourceRules(t, cadvisorResourceRules)
	pods := schema.GroupResource{Resource: "pods"}
	const names = "web-[a-z0-9]+-[a-z0-9]+"
	tests := []struct {
		name string
		rq   *rules.ResourceQueries
		req  HistoryRequest
		want string
		// keeps are the series of the answer that are the history; drops those that are not.
		keeps, drops []model.Metric
		err          error
	}{{
		name:  "cpu sums the cores of every container of the target's pods only, through the cpu rule's containerQuery and pod label",
		rq:    rq,
		req:   HistoryRequest{Namespace: "ns", Metric: "cpu", Resource: pods, Names: names},
		want:  `sum by (podpilot_history) (label_replace((sum by (kubernetes_pod,kubernetes_container) (rate(container_cpu_usage_seconds_total{container!="",namespace="ns",kubernetes_pod=~"web-[a-z0-9]+-[a-z0-9]+"}[3m]))) >= 0, "podpilot_history", "1", "kubernetes_pod", "web-[a-z0-9]+-[a-z0-9]+"))`,
		keeps: []model.Metric{{historyLabel: "1"}},
		drops: []model.Metric{{}},
	}, {
		name:  "memory sums the bytes of the target's pods through the memory rule, in bytes as metrics.k8s.io serves them",
		rq:    rq,
		req:   HistoryRequest{Namespace: "ns", Metric: "memory", Resource: pods, Names: names},
		want:  `sum by (podpilot_history) (label_replace((sum by (kubernetes_pod,kubernetes_container) (container_memory_working_set_bytes{container!="",namespace="ns",kubernetes_pod=~"web-[a-z0-9]+-[a-z0-9]+"})) >= 0, "podpilot_history", "1", "kubernetes_pod", "web-[a-z0-9]+-[a-z0-9]+"))`,
		keeps: []model.Metric{{historyLabel: "1"}},
		drops: []model.Metric{{}},
	}, {
		name:  "a ContainerResource history keeps only that container of the target's pods, by the rule's container label, its name quoted",
		rq:    rq,
		req:   HistoryRequest{Namespace: "ns", Metric: "cpu", Resource: pods, Names: names, Container: "app.v2"},
		want:  `sum by (podpilot_history, podpilot_history_1) (label_replace(label_replace((sum by (kubernetes_pod,kubernetes_container) (rate(container_cpu_usage_seconds_total{container!="",namespace="ns",kubernetes_pod=~"web-[a-z0-9]+-[a-z0-9]+"}[3m]))) >= 0, "podpilot_history", "1", "kubernetes_pod", "web-[a-z0-9]+-[a-z0-9]+"), "podpilot_history_1", "1", "kubernetes_container", "app\\.v2"))`,
		keeps: []model.Metric{{historyLabel: "1", historyLabel + "_1": "1"}},
		drops: []model.Metric{{}, {historyLabel: "1"}, {historyLabel + "_1": "1"}},
	}, {
		name: "without resourceRules the history is refused with ErrNoResourceRules, never guessed",
		req:  HistoryRequest{Namespace: "ns", Metric: "cpu", Resource: pods, Names: names},
		err:  ErrNoResourceRules,
	}, {
		name: "a resource other than cpu and memory has no rule",
		rq:   rq,
		req:  HistoryRequest{Namespace: "ns", Metric: "ephemeral-storage", Resource: pods, Names: names},
		err:  errUnknownResource,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, keep, err := resourceHistoryQuery(tc.rq, tc.req)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if tc.err != nil {
				return
			}
			if q != tc.want {
				t.Errorf("query\n got %s\nwant %s", q, tc.want)
			}
			for _, m := range tc.keeps {
				if !keep(m) {
					t.Errorf("keep(%v) = false, want true", m)
				}
			}
			for _, m := range tc.drops {
				if keep(m) {
					t.Errorf("keep(%v) = true, want false", m)
				}
			}
		})
	}
}

func TestResourceHistoryReadsTheSumInTheUnitsOfTheCurrentReading(t *testing.T) {
	// Two cores and a half at every step: what metrics.k8s.io serves as 2500m, which the
	// controller's aggregate reads as 2.5.
	prom := &fakeProm{rangeQuery: rangeAnswer([]model.Metric{{historyLabel: "1"}, {}}, func(int) float64 { return 2.5 })}
	p := servingProvider(t, prom, rulesFile(t, cadvisorResourceRules))
	prom.queries = nil
	req := HistoryRequest{Namespace: "ns", Metric: "cpu", Resource: schema.GroupResource{Resource: "pods"}, Names: "web-[a-z0-9]+-[a-z0-9]+",
		Start: testNow.Add(-2 * time.Minute), End: testNow, Step: time.Minute}
	got, err := p.FreshReads().ResourceHistory(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]float64{2.5, 2.5, 2.5}, got); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if len(prom.queries) != 1 || !strings.Contains(prom.queries[0], "container_cpu_usage_seconds_total") {
		t.Errorf("queries = %q, want one range query of the cpu rule", prom.queries)
	}
}

func TestResourceHistoryWithoutResourceRulesSaysTheyAreNeeded(t *testing.T) {
	prom := &fakeProm{series: seedSeries()}
	p := servingProvider(t, prom, "")
	req := HistoryRequest{Namespace: "ns", Metric: "memory", Resource: schema.GroupResource{Resource: "pods"}, Names: "web-[0-9]+",
		Start: testNow.Add(-time.Minute), End: testNow, Step: time.Minute}
	_, err := p.PodAutoscalerReads(nil).ResourceHistory(t.Context(), req)
	if !errors.Is(err, ErrNoResourceRules) || !strings.Contains(err.Error(), "needs podpilot's resourceRules") {
		t.Errorf("err = %v, want ErrNoResourceRules saying resourceRules are needed", err)
	}
	if len(prom.queries) != 0 {
		t.Errorf("queries = %q, want none", prom.queries)
	}
}
