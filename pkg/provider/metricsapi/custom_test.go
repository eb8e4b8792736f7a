package metricsapi

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

var (
	podsGR = schema.GroupResource{Resource: "pods"}
	qpsPod = provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "zdns_vanguard_qps"}
)

func podValue(name string, milli int64, ts time.Time, sel *metav1.LabelSelector) custom_metrics.MetricValue {
	return custom_metrics.MetricValue{
		DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: name},
		Metric:          custom_metrics.MetricIdentifier{Name: "zdns_vanguard_qps", Selector: sel},
		Timestamp:       metav1.NewTime(ts),
		Value:           *resource.NewMilliQuantity(milli, resource.DecimalSI),
	}
}

func seedPods() []runtime.Object {
	web := map[string]string{"app": "web"}
	return []runtime.Object{
		pod("ns", "p1", web),
		pod("ns", "p2", web),
		pod("ns", "p3", map[string]string{"app": "db"}),
		pod("other", "p9", web),
	}
}

// answer returns a fixed vector (or error) for any query.
func answer(vec model.Vector, err error) func(string) (model.Vector, error) {
	return func(string) (model.Vector, error) { return vec, err }
}

func TestGetMetricBySelector(t *testing.T) {
	t1, t2, t3 := testNow.Add(-5*time.Second), testNow.Add(-7*time.Second), testNow.Add(-9*time.Second)
	perPod := model.Vector{
		sample(1.5, t1, "pod", "p1"),
		sample(2000, t2, "pod", "p2"),
		sample(0.25, t3, "pod", "p3"),
		sample(4, t3, "pod", "gone"), // a pod that no longer exists
	}
	unavailable := fmt.Errorf("query %q: %w: %w", "sum(...)", prometheus.ErrUnavailable, errors.New("dial tcp 10.0.0.1:9090: connect: connection refused"))
	tests := []struct {
		name        string
		info        provider.CustomMetricInfo
		selector    string
		metricSel   string
		query       func(string) (model.Vector, error)
		want        []custom_metrics.MetricValue
		wantCode    int
		wantMessage []string
		wantQueries int
		inQuery     []string
	}{
		{
			name:        "a label selector resolves pods from the informer and queries exactly them in one query, with each sample's timestamp",
			info:        qpsPod,
			selector:    "app=web",
			query:       answer(perPod, nil),
			want:        []custom_metrics.MetricValue{podValue("p1", 1500, t1, nil), podValue("p2", 2000000, t2, nil)},
			wantCode:    http.StatusOK,
			wantQueries: 1,
			inQuery:     []string{`sum(rate(zdns_vanguard_queries_total{`, `namespace="ns"`, `pod=~"p1|p2"`, `by (pod)`},
		},
		{
			name:        "an empty selector queries every pod of the namespace and serves only pods that exist",
			info:        qpsPod,
			query:       answer(perPod, nil),
			want:        []custom_metrics.MetricValue{podValue("p1", 1500, t1, nil), podValue("p2", 2000000, t2, nil), podValue("p3", 250, t3, nil)},
			wantCode:    http.StatusOK,
			wantQueries: 1,
			inQuery:     []string{`namespace="ns"`, `pod!=""`},
		},
		{
			name:        "the metric selector is matched in the query and reported in each value",
			info:        qpsPod,
			selector:    "app=web",
			metricSel:   "zone in (a,b)",
			query:       answer(model.Vector{sample(1, t1, "pod", "p1")}, nil),
			want:        []custom_metrics.MetricValue{podValue("p1", 1000, t1, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "zone", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}})},
			wantCode:    http.StatusOK,
			wantQueries: 1,
			inQuery:     []string{`zone=~"a|b"`},
		},
		{
			name:        "NaN and Inf samples are dropped as no data",
			info:        qpsPod,
			selector:    "app=web",
			query:       answer(model.Vector{sample(math.NaN(), t1, "pod", "p1"), sample(math.Inf(1), t1, "pod", "p2"), sample(3, t2, "pod", "p2")}, nil),
			want:        []custom_metrics.MetricValue{podValue("p2", 3000, t2, nil)},
			wantCode:    http.StatusOK,
			wantQueries: 1,
		},
		{
			name:        "a metric selector with gt is a 400 naming the operator, without a query",
			info:        qpsPod,
			selector:    "app=web",
			metricSel:   "code>499",
			query:       answer(perPod, nil),
			wantCode:    http.StatusBadRequest,
			wantMessage: []string{"unsupported label selector operator", "code"},
		},
		{
			name:        "Prometheus unavailable is a 503 carrying the cause, never a zero",
			info:        qpsPod,
			selector:    "app=web",
			query:       answer(nil, unavailable),
			wantCode:    http.StatusServiceUnavailable,
			wantMessage: []string{"prometheus unavailable", "connection refused", "zdns_vanguard_qps"},
			wantQueries: 1,
		},
		{
			name:        "a query Prometheus rejects is a 500 with its message: a rule bug",
			info:        qpsPod,
			selector:    "app=web",
			query:       answer(nil, fmt.Errorf("query: %w: %w", prometheus.ErrBadQuery, errors.New("parse error at char 12"))),
			wantCode:    http.StatusInternalServerError,
			wantMessage: []string{"parse error at char 12"},
			wantQueries: 1,
		},
		{
			name:        "no data for the selected pods is a 404",
			info:        qpsPod,
			selector:    "app=web",
			query:       answer(model.Vector{sample(1, t1, "pod", "p3")}, nil),
			wantCode:    http.StatusNotFound,
			wantQueries: 1,
		},
		{
			name:     "a selector matching no pod is a 404 without a query",
			info:     qpsPod,
			selector: "app=none",
			query:    answer(perPod, nil),
			wantCode: http.StatusNotFound,
		},
		{
			name:        "an undiscovered metric is a 404 without a query",
			info:        provider.CustomMetricInfo{GroupResource: podsGR, Namespaced: true, Metric: "nope"},
			selector:    "app=web",
			wantCode:    http.StatusNotFound,
			wantMessage: []string{"nope"},
		},
		{
			name:        "a singular resource name is normalized",
			info:        provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pod"}, Namespaced: true, Metric: "zdns_vanguard_qps"},
			selector:    "app=web",
			query:       answer(perPod, nil),
			want:        []custom_metrics.MetricValue{podValue("p1", 1500, t1, nil), podValue("p2", 2000000, t2, nil)},
			wantCode:    http.StatusOK,
			wantQueries: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prom := &fakeProm{series: seedSeries(), query: tt.query}
			p := servingProvider(t, prom, "", seedPods()...)
			sel, err := labels.Parse(tt.selector)
			if err != nil {
				t.Fatal(err)
			}
			metricSel, err := labels.Parse(tt.metricSel)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.GetMetricBySelector(t.Context(), "ns", sel, tt.info, metricSel)
			checkStatus(t, err, tt.wantCode, tt.wantMessage...)
			if err == nil {
				if diff := cmp.Diff(tt.want, got.Items, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
			}
			if len(prom.queries) != tt.wantQueries {
				t.Fatalf("queries = %q, want %d", prom.queries, tt.wantQueries)
			}
			for _, frag := range tt.inQuery {
				if !strings.Contains(prom.queries[0], frag) {
					t.Errorf("query %q does not contain %q", prom.queries[0], frag)
				}
			}
		})
	}
}

func TestGetMetricBySelectorKeepsVeryManyObjectsToOneBoundedQuery(t *testing.T) {
	const n = 3000
	objs := make([]runtime.Object, 0, n)
	vec := model.Vector{sample(9, testNow, "pod", "not-selected")}
	for i := range n {
		name := fmt.Sprintf("zdns-vanguard-%05d", i)
		objs = append(objs, pod("ns", name, map[string]string{"app": "web"}))
		vec = append(vec, sample(float64(i), testNow, "pod", name))
	}
	objs = append(objs, pod("ns", "not-selected", map[string]string{"app": "db"}))
	prom := &fakeProm{series: seedSeries(), query: answer(vec, nil)}
	p := servingProvider(t, prom, "", objs...)

	got, err := p.GetMetricBySelector(t.Context(), "ns", labels.SelectorFromSet(labels.Set{"app": "web"}), qpsPod, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(prom.queries) != 1 {
		t.Fatalf("queries = %d, want 1", len(prom.queries))
	}
	if q := prom.queries[0]; len(q) > 1024 || !strings.Contains(q, `pod!=""`) {
		t.Errorf("query is %d bytes, want a constant-size all-objects query: %.200s", len(q), q)
	}
	if len(got.Items) != n {
		t.Errorf("values = %d, want %d (exactly the selected pods)", len(got.Items), n)
	}
	for _, v := range got.Items {
		if v.DescribedObject.Name == "not-selected" {
			t.Error("a pod outside the selector was returned")
		}
	}
}

func TestGetMetricByName(t *testing.T) {
	ts := testNow.Add(-3 * time.Second)
	nodeRules := `rules:
- seriesQuery: '{node!=""}'
  resources:
    overrides:
      node: {resource: node}
  metricsQuery: max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	serviceRules := `rules:
- seriesQuery: '{namespace!="",service!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      service: {resource: service}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	nodeSeries := map[string][]model.LabelSet{`{node!=""}`: {labelSet("node_load1", "node", "n1", "instance", "10.0.0.1:9100")}}
	serviceSeries := map[string][]model.LabelSet{`{namespace!="",service!=""}`: {labelSet("http_requests", "namespace", "ns", "service", "web")}}
	nodeInfo := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "nodes"}, Metric: "node_load1"}
	serviceInfo := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "services"}, Namespaced: true, Metric: "http_requests"}
	p1, n1, web := pod("ns", "p1", nil), node("n1", nil), object("Service", "ns", "web")
	tests := []struct {
		name    string
		rules   string
		series  map[string][]model.LabelSet
		objects []runtime.Object
		// deleted are removed from their informer's cache before the request, as a watch's
		// delete event does, while Prometheus still has their series.
		deleted  []runtime.Object
		object   types.NamespacedName
		info     provider.CustomMetricInfo
		query    func(string) (model.Vector, error)
		want     custom_metrics.ObjectReference
		wantCode int
		// noQuery: the object is not in the cache, so Prometheus is not asked.
		noQuery bool
		inQuery []string
	}{
		{
			name:     "a named pod is queried by name in its namespace",
			series:   seedSeries(),
			objects:  []runtime.Object{p1},
			object:   types.NamespacedName{Namespace: "ns", Name: "p1"},
			info:     qpsPod,
			query:    answer(model.Vector{sample(2, ts, "pod", "p1")}, nil),
			want:     custom_metrics.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "ns", Name: "p1"},
			wantCode: http.StatusOK,
			inQuery:  []string{`namespace="ns"`, `pod="p1"`},
		},
		{
			name:     "a namespace's own metric (namespaces/ns/metrics/m) is the root-scoped namespace object",
			series:   seedSeries(),
			objects:  []runtime.Object{object("Namespace", "", "ns")},
			object:   types.NamespacedName{Name: "ns"},
			info:     provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "namespaces"}, Metric: "zdns_vanguard_qps"},
			query:    answer(model.Vector{sample(2, ts, "namespace", "ns")}, nil),
			want:     custom_metrics.ObjectReference{Kind: "Namespace", APIVersion: "v1", Name: "ns"},
			wantCode: http.StatusOK,
			inQuery:  []string{`{namespace="ns"}`, `by (namespace)`},
		},
		{
			name:     "a root-scoped node is queried without a namespace",
			rules:    nodeRules,
			series:   nodeSeries,
			objects:  []runtime.Object{n1},
			object:   types.NamespacedName{Name: "n1"},
			info:     nodeInfo,
			query:    answer(model.Vector{sample(2, ts, "node", "n1")}, nil),
			want:     custom_metrics.ObjectReference{Kind: "Node", APIVersion: "v1", Name: "n1"},
			wantCode: http.StatusOK,
			inQuery:  []string{`max(node_load1{node="n1"}) by (node)`},
		},
		{
			name:     "a result for another object only is a 404",
			series:   seedSeries(),
			objects:  []runtime.Object{p1},
			object:   types.NamespacedName{Namespace: "ns", Name: "p1"},
			info:     qpsPod,
			query:    answer(model.Vector{sample(2, ts, "pod", "p2")}, nil),
			wantCode: http.StatusNotFound,
		},
		{
			name:     "a pod metric asked cluster-wide is not served: a 404",
			series:   seedSeries(),
			objects:  []runtime.Object{p1},
			object:   types.NamespacedName{Name: "p1"},
			info:     provider.CustomMetricInfo{GroupResource: podsGR, Metric: "zdns_vanguard_qps"},
			wantCode: http.StatusNotFound,
		},
		{
			name:     "only objects that exist are served: a pod the cache no longer holds is a 404 while its series are still in Prometheus",
			series:   seedSeries(),
			objects:  []runtime.Object{p1},
			deleted:  []runtime.Object{p1},
			object:   types.NamespacedName{Namespace: "ns", Name: "p1"},
			info:     qpsPod,
			query:    answer(model.Vector{sample(2, ts, "pod", "p1")}, nil),
			wantCode: http.StatusNotFound,
			noQuery:  true,
		},
		{
			name:     "only objects that exist are served: a pod never created is a 404 (the same object check as pods/*)",
			series:   seedSeries(),
			object:   types.NamespacedName{Namespace: "ns", Name: "p1"},
			info:     qpsPod,
			query:    answer(model.Vector{sample(2, ts, "pod", "p1")}, nil),
			wantCode: http.StatusNotFound,
			noQuery:  true,
		},
		{
			name:     "only objects that exist are served: a deleted root-scoped node is a 404",
			rules:    nodeRules,
			series:   nodeSeries,
			objects:  []runtime.Object{n1},
			deleted:  []runtime.Object{n1},
			object:   types.NamespacedName{Name: "n1"},
			info:     nodeInfo,
			query:    answer(model.Vector{sample(2, ts, "node", "n1")}, nil),
			wantCode: http.StatusNotFound,
			noQuery:  true,
		},
		{
			name:     "a namespaced service that exists is served",
			rules:    serviceRules,
			series:   serviceSeries,
			objects:  []runtime.Object{web},
			object:   types.NamespacedName{Namespace: "ns", Name: "web"},
			info:     serviceInfo,
			query:    answer(model.Vector{sample(2, ts, "service", "web")}, nil),
			want:     custom_metrics.ObjectReference{Kind: "Service", APIVersion: "v1", Namespace: "ns", Name: "web"},
			wantCode: http.StatusOK,
			inQuery:  []string{`namespace="ns"`, `service="web"`},
		},
		{
			name:     "only objects that exist are served: a deleted namespaced service is a 404",
			rules:    serviceRules,
			series:   serviceSeries,
			objects:  []runtime.Object{web},
			deleted:  []runtime.Object{web},
			object:   types.NamespacedName{Namespace: "ns", Name: "web"},
			info:     serviceInfo,
			query:    answer(model.Vector{sample(2, ts, "service", "web")}, nil),
			wantCode: http.StatusNotFound,
			noQuery:  true,
		},
		{
			name:     "only objects that exist are served: a service of the same name in another namespace is not the object",
			rules:    serviceRules,
			series:   serviceSeries,
			objects:  []runtime.Object{object("Service", "other", "web")},
			object:   types.NamespacedName{Namespace: "ns", Name: "web"},
			info:     serviceInfo,
			query:    answer(model.Vector{sample(2, ts, "service", "web")}, nil),
			wantCode: http.StatusNotFound,
			noQuery:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.rules != "" {
				path = rulesFile(t, tt.rules)
			}
			prom := &fakeProm{series: tt.series, query: tt.query}
			p := servingProvider(t, prom, path, tt.objects...)
			for _, obj := range tt.deleted {
				deleteFromCache(t, p, obj)
			}
			got, err := p.GetMetricByName(t.Context(), tt.object, tt.info, labels.Everything())
			checkStatus(t, err, tt.wantCode)
			if err != nil {
				if tt.noQuery && len(prom.queries) != 0 {
					t.Errorf("queries = %q, want none for an object the cache does not hold", prom.queries)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got.DescribedObject); diff != "" {
				t.Errorf("described object (-want +got):\n%s", diff)
			}
			if !got.Timestamp.Time.Equal(ts) || got.Value.MilliValue() != 2000 {
				t.Errorf("value %s at %s, want 2 at %s", got.Value.String(), got.Timestamp.Time, ts)
			}
			if len(prom.queries) != 1 {
				t.Fatalf("queries = %q, want one", prom.queries)
			}
			for _, frag := range tt.inQuery {
				if !strings.Contains(prom.queries[0], frag) {
					t.Errorf("query %q does not contain %q", prom.queries[0], frag)
				}
			}
		})
	}
}

func TestGetMetricBySelectorOnRootScopedNodes(t *testing.T) {
	rules := rulesFile(t, `rules:
- seriesQuery: '{node!=""}'
  resources:
    overrides:
      node: {resource: node}
  metricsQuery: max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`)
	prom := &fakeProm{
		series: map[string][]model.LabelSet{`{node!=""}`: {labelSet("node_load1", "node", "n1")}},
		query:  answer(model.Vector{sample(1, testNow, "node", "n1"), sample(2, testNow, "node", "n2")}, nil),
	}
	p := servingProvider(t, prom, rules, node("n1", map[string]string{"pool": "gpu"}), node("n2", map[string]string{"pool": "cpu"}))
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "nodes"}, Metric: "node_load1"}
	got, err := p.GetMetricBySelector(t.Context(), "", labels.SelectorFromSet(labels.Set{"pool": "gpu"}), info, labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 1 || got.Items[0].DescribedObject.Name != "n1" || got.Items[0].DescribedObject.Namespace != "" {
		t.Errorf("values = %+v, want node n1 only", got.Items)
	}
	if want := `max(node_load1{node="n1"}) by (node)`; len(prom.queries) != 1 || prom.queries[0] != want {
		t.Errorf("queries = %q, want [%q]", prom.queries, want)
	}
}
