package resourcemetrics

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/metrics/pkg/apis/metrics"
)

// victoriaMetricsMaxQueryLen is VictoriaMetrics' default -search.maxQueryLen: it rejects longer
// queries.
const victoriaMetricsMaxQueryLen = 16 << 10

// byNameRules are resource rules that read the pod names from .LabelValuesByName, as many
// prometheus-adapter users write them: not separable, so asked by name.
const byNameRules = `
resourceRules:
  cpu:
    containerQuery: sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"}[3m]))
    nodeQuery: sum by (<<.GroupBy>>) (rate(node_cpu_seconds_total{mode!="idle",<<.LabelMatchers>>}[3m]))
    resources: {overrides: {node: {resource: node}, namespace: {resource: namespace}, pod: {resource: pod}}}
    containerLabel: container
  memory:
    containerQuery: sum by (<<.GroupBy>>) (container_memory_working_set_bytes{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"})
    nodeQuery: sum by (<<.GroupBy>>) (node_memory_working_set_bytes{<<.LabelMatchers>>})
    resources: {overrides: {node: {resource: node}, namespace: {resource: namespace}, pod: {resource: pod}}}
    containerLabel: container
  window: 3m
`

// podsNamedIn finds the Deployment pod names of splitTestPods in a query.
var podsNamedIn = regexp.MustCompile(`web-7d9f8c6b5d-[0-9]{5}`)

// namingProm answers a query with one sample per pod it names; it may be called concurrently
// and records the queries' lengths.
type namingProm struct {
	fakeProm
	mu      sync.Mutex
	lengths []int
}

func (f *namingProm) Query(_ context.Context, q string, _ time.Time) (model.Vector, error) {
	f.mu.Lock()
	f.lengths = append(f.lengths, len(q))
	f.mu.Unlock()
	var vec model.Vector
	for _, p := range podsNamedIn.FindAllString(q, -1) {
		vec = append(vec, sample(0.5, testNow, "namespace", "shop", "pod", p, "container", "app"))
	}
	return vec, nil
}

func TestMetricsOfALargeTargetAreAskedInQueriesUnderTheLimit(t *testing.T) {
	pods := make([]*metav1.PartialObjectMetadata, 5000)
	for i := range pods {
		pods[i] = object("shop", fmt.Sprintf("web-7d9f8c6b5d-%05d", i), map[string]string{"app": "web"})
	}
	prom := &namingProm{}
	s := &podStorage{p: fixture{prom: &prom.fakeProm, rules: compileRulesFrom(t, byNameRules), pods: pods}.provider(t)}
	s.p.prom = prom
	ctx := genericapirequest.WithNamespace(t.Context(), "shop")
	obj, err := s.List(ctx, &metainternalversion.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"app": "web"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*metrics.PodMetricsList).Items; len(got) != len(pods) {
		t.Errorf("%d pods' metrics, want %d", len(got), len(pods))
	}
	longest := slices.Max(prom.lengths)
	t.Logf("metrics.k8s.io, 5,000 pods: %d queries, the longest %d bytes", len(prom.lengths), longest)
	if longest > victoriaMetricsMaxQueryLen {
		t.Errorf("a query of %d bytes, over VictoriaMetrics' default -search.maxQueryLen %d", longest, victoriaMetricsMaxQueryLen)
	}
}
