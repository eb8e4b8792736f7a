package metricsapi

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/podcache/podcachetest"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// victoriaMetricsMaxQueryLen is VictoriaMetrics' default -search.maxQueryLen: it rejects longer
// queries.
const victoriaMetricsMaxQueryLen = 16 << 10

// podNamesInQuery finds podcachetest.DeploymentPodNames' names in a query.
var podNamesInQuery = regexp.MustCompile(`web-7d9f8c6b5d-[a-z0-9]{5}`)

// recordingProm answers every query with one sample per pod the query names (value: the pod's
// index), or for every pod of pods when it names none, and records the queries' lengths. It
// may be called concurrently. fail, when set, fails the queries naming that pod.
type recordingProm struct {
	*fakeProm
	pods  []string
	index map[string]int
	fail  string

	mu      sync.Mutex
	lengths []int
}

func newRecordingProm(pods []string, series map[string][]model.LabelSet) *recordingProm {
	index := make(map[string]int, len(pods))
	for i, p := range pods {
		index[p] = i
	}
	return &recordingProm{fakeProm: &fakeProm{series: series}, pods: pods, index: index}
}

func (r *recordingProm) Query(_ context.Context, q string, _ time.Time) (model.Vector, error) {
	r.mu.Lock()
	r.lengths = append(r.lengths, len(q))
	r.mu.Unlock()
	named := podNamesInQuery.FindAllString(q, -1)
	if len(named) == 0 {
		named = r.pods
	}
	if r.fail != "" && slices.Contains(named, r.fail) {
		return nil, fmt.Errorf("query: %w: connection reset by peer", prometheus.ErrUnavailable)
	}
	vec := make(model.Vector, 0, len(named))
	for _, p := range named {
		if i, ok := r.index[p]; ok {
			vec = append(vec, sample(float64(i), testNow, "namespace", "shop", "pod", p))
		}
	}
	return vec, nil
}

func (r *recordingProm) QueryLabels(ctx context.Context, q string, at time.Time, labels []string) ([]prometheus.Sample, error) {
	vec, err := r.Query(ctx, q, at)
	return project(vec, labels), err
}

// longest returns the number of queries and the longest one's length, and forgets them.
func (r *recordingProm) longest() (n, longest int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, longest = len(r.lengths), slices.Max(append(r.lengths, 0))
	r.lengths = nil
	return n, longest
}

// Rule files for large targets: prometheus-adapter's usual shape (separable) and one that reads
// the pod names from .LabelValuesByName, as many prometheus-adapter users write (not separable:
// asked by name).
const (
	separableRules = `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)'
`
	byNameRules = `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'max by (pod) (<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"})'
`
	unsplittableRules = `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  resources: {overrides: {namespace: {resource: namespace}, pod: {resource: pod}}}
  metricsQuery: 'sum(<<.Series>>{<<.LabelMatchers>>}) by (pod) / ignoring(pod) group_left sum(<<.Series>>{<<.LabelMatchers>>})'
`
)

// largeTarget is a provider serving rulesFile over prom for 5,000 pods of a Deployment in
// namespace shop, with --metrics-max-query-bytes maxBytes and answers shared when share is set.
func largeTarget(t *testing.T, prom prometheus.Client, pods []string, rulesFile string, maxBytes int, share bool) *Provider {
	t.Helper()
	objs := make([]runtime.Object, len(pods))
	for i, name := range pods {
		objs[i] = pod("shop", name, map[string]string{"app": "web"})
	}
	opts := *NewOptions()
	opts.RulesFile = rulesFile
	opts.MaxQueryBytes = maxBytes
	if !share {
		opts.QueryCacheMaxAge = 0
	}
	p, _ := providerWith(t, prom, opts, objs...)
	return serve(t, p)
}

// valuesByPod maps a list's values to their pods.
func valuesByPod(list *custom_metrics.MetricValueList) map[string]int64 {
	out := map[string]int64{}
	for _, v := range list.Items {
		out[v.DescribedObject.Name] = v.Value.MilliValue()
	}
	return out
}

func TestALargeTargetIsAskedInQueriesUnderTheLimit(t *testing.T) {
	pods := podcachetest.DeploymentPodNames(5000)
	series := map[string][]model.LabelSet{podsQuery: {labelSet("http_requests", "namespace", "shop", "pod", pods[0])}}
	info := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "http_requests"}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	tests := []struct {
		name  string
		rules string
		share bool
		// fresh reads as the autoscaler does (FreshReads), not as the HPA does.
		fresh bool
	}{
		{name: "a rule reading names from .LabelValuesByName is split by name", rules: byNameRules},
		{name: "the autoscaler's reads of such a rule are split alike", rules: byNameRules, fresh: true},
		{name: "a separable rule without sharing asks for every pod at once", rules: separableRules},
		{name: "a separable rule with sharing asks for every pod at once", rules: separableRules, share: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := newRecordingProm(pods, series)
			p := largeTarget(t, prom, pods, rulesFile(t, tt.rules), rules.DefaultMaxQueryBytes, tt.share)
			get := p.GetMetricBySelector
			if tt.fresh {
				get = p.FreshReads().GetMetricBySelector
			}
			list, err := get(t.Context(), "shop", web, info, labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			n, longest := prom.longest()
			t.Logf("5,000 pods: %d queries, the longest %d bytes", n, longest)
			if longest > rules.DefaultMaxQueryBytes || longest > victoriaMetricsMaxQueryLen {
				t.Errorf("a query of %d bytes, over --metrics-max-query-bytes %d or VictoriaMetrics' default %d",
					longest, rules.DefaultMaxQueryBytes, victoriaMetricsMaxQueryLen)
			}
			// The unsplit answer: the same request under a limit that fits every name.
			whole := largeTarget(t, newRecordingProm(pods, series), pods, rulesFile(t, tt.rules), 1<<20, tt.share)
			want, err := whole.GetMetricBySelector(t.Context(), "shop", web, info, labels.Everything())
			if err != nil {
				t.Fatal(err)
			}
			got, wantValues := valuesByPod(list), valuesByPod(want)
			if len(got) != len(pods) || len(wantValues) != len(pods) {
				t.Fatalf("%d values split, %d unsplit, want %d", len(got), len(wantValues), len(pods))
			}
			for pod, v := range wantValues {
				if got[pod] != v {
					t.Fatalf("pod %s = %dm split, %dm unsplit", pod, got[pod], v)
				}
			}
			if !slices.EqualFunc(list.Items, want.Items, func(a, b custom_metrics.MetricValue) bool {
				return a.DescribedObject.Name == b.DescribedObject.Name
			}) {
				t.Error("the split answer's order differs from the unsplit one's")
			}
		})
	}
}

func TestALargeTargetIsAnsweredWholeOrNotAtAll(t *testing.T) {
	pods := podcachetest.DeploymentPodNames(5000)
	series := map[string][]model.LabelSet{podsQuery: {labelSet("http_requests", "namespace", "shop", "pod", pods[0])}}
	info := provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "http_requests"}
	web := labels.SelectorFromSet(labels.Set{"app": "web"})
	t.Run("one chunk failing fails the answer", func(t *testing.T) {
		prom := newRecordingProm(pods, series)
		prom.fail = pods[len(pods)-1]
		p := largeTarget(t, prom, pods, rulesFile(t, byNameRules), rules.DefaultMaxQueryBytes, true)
		list, err := p.GetMetricBySelector(t.Context(), "shop", web, info, labels.Everything())
		if err == nil {
			t.Fatalf("%d values, want an error: a partial answer", len(list.Items))
		}
		checkStatus(t, err, http.StatusServiceUnavailable, "connection reset by peer")
		if n, _ := prom.longest(); n < 2 {
			t.Errorf("%d queries sent, want the split ones", n)
		}
	})
	t.Run("a rule that cannot be split is a 400 naming the limit and the rule", func(t *testing.T) {
		prom := newRecordingProm(pods, series)
		p := largeTarget(t, prom, pods, rulesFile(t, unsplittableRules), rules.DefaultMaxQueryBytes, true)
		_, err := p.GetMetricBySelector(t.Context(), "shop", web, info, labels.Everything())
		checkStatus(t, err, http.StatusBadRequest, fmt.Sprintf("the limit of %d (--metrics-max-query-bytes)", rules.DefaultMaxQueryBytes),
			`seriesQuery "{namespace!=\"\",pod!=\"\"}"`, "cannot be split")
		if n, _ := prom.longest(); n != 0 {
			t.Errorf("%d queries sent, want none", n)
		}
		if err != nil && strings.Count(err.Error(), "web-7d9f8c6b5d-") > 0 {
			t.Errorf("the error carries pod names: %.200s…", err.Error())
		}
	})
}
