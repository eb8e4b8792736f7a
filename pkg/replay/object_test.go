package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// serviceRules serve the gauge requests_per_second for services (the default rules serve pods
// and namespaces only); metricsQuery is the rule's query.
func serviceRules(t *testing.T, metricsQuery string) *rules.RuleSet {
	t.Helper()
	cfg, err := rules.Load([]byte(`rules:
- seriesQuery: '{namespace!="",service!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      service: {resource: service}
  metricsQuery: '` + metricsQuery + `'
- seriesQuery: '{namespace!="",pod=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := rules.Compile(cfg, rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

const separableService = `sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)`

// objectSeries are the series discovery finds: requests_per_second of two services, and the
// namespace's backlog.
var objectSeries = []model.LabelSet{
	{"__name__": "requests_per_second", "namespace": "ns", "service": "web"},
	{"__name__": "requests_per_second", "namespace": "ns", "service": "api"},
	{"__name__": "backlog", "namespace": "ns"},
}

// objectMetric is requests_per_second of Service name with target typ at v.
func objectMetric(name string, typ podpilotv1alpha1.ValueTargetType, v string) podpilotv1alpha1.ObjectMetricSpec {
	m := podpilotv1alpha1.ObjectMetricSpec{MetricName: "requests_per_second", TargetType: typ,
		DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: "v1", Kind: "Service", Name: name}}
	if typ == podpilotv1alpha1.ValueTarget {
		m.Value = ptr.To(resource.MustParse(v))
	} else {
		m.AverageValue = ptr.To(resource.MustParse(v))
	}
	return m
}

// objectPA is a PodAutoscaler of web, 1 to 20 replicas, with the given object metrics.
func objectPA(ms ...podpilotv1alpha1.ObjectMetricSpec) *podpilotv1alpha1.PodAutoscaler {
	return &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "web",
		MinReplicas: ptr.To[int32](1), MaxReplicas: 20, ObjectMetrics: ms,
	}}
}

// replayObjects replays pa over n steps through set; it returns the replicas, the summary and the
// queries asked.
func replayObjects(t *testing.T, set *rules.RuleSet, pa *podpilotv1alpha1.PodAutoscaler, answers map[string]model.Matrix, n int) ([]int32, Summary, []string) {
	t.Helper()
	spec, err := SpecOf("objects", pa)
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{series: objectSeries, answers: answers}
	r := &Reader{Source: src, Rules: set, Namespace: "ns", Memo: NewRangeMemo()}
	tr, err := r.Trace(t.Context(), spec, Window{From: t0, To: t0.Add(time.Duration(n-1) * step), Step: step})
	if err != nil {
		t.Fatal(err)
	}
	steps := Simulate(spec, tr, testModel(0, 0))
	reps, _ := replicasOf(steps)
	return reps, Summarize(spec, steps, step, nil), src.queries
}

func TestObjectMetricsReplayAsTheControllerDecides(t *testing.T) {
	services := func(web, api []float64) model.Matrix {
		return model.Matrix{stream(model.Metric{"service": "web"}, web...), stream(model.Metric{"service": "api"}, api...)}
	}
	backlog := podpilotv1alpha1.ObjectMetricSpec{MetricName: "backlog", TargetType: podpilotv1alpha1.AverageValueTarget,
		AverageValue: ptr.To(resource.MustParse("10")), DescribedObject: podpilotv1alpha1.MetricObjectReference{Kind: "Namespace", Name: "ignored"}}
	tests := []struct {
		name         string
		metricsQuery string
		pa           *podpilotv1alpha1.PodAutoscaler
		answers      map[string]model.Matrix
		steps        int
		want         []int32
		noData       int
		wantQueries  []string // the queries of the object metrics, in order
	}{
		{
			// web's 500 over an averageValue of 100 is 5 replicas; api's 900 is not web's.
			name:         "an Object AverageValue target reads the described object's value, divided by the replicas",
			metricsQuery: separableService, pa: objectPA(objectMetric("web", podpilotv1alpha1.AverageValueTarget, "100")),
			answers: map[string]model.Matrix{"requests_per_second": services([]float64{400, 500}, []float64{900, 900}),
				"kube_deployment_spec_replicas": ksm(4, 4)},
			steps: 2, want: []int32{4, 5},
			wantQueries: []string{`sum(requests_per_second{namespace="ns",service!=""}) by (service)`},
		},
		{
			// 60 at 4 actual replicas is a load of 240: 60 per replayed pod, twice the target, 8
			// pods; on 8 pods it reads 30, at target.
			name:         "an Object Value target reads the value as a load spread over the replicas that had it",
			metricsQuery: separableService, pa: objectPA(objectMetric("web", podpilotv1alpha1.ValueTarget, "30")),
			answers: map[string]model.Matrix{"requests_per_second": services([]float64{60, 60, 60}, []float64{1, 1, 1}),
				"kube_deployment_spec_replicas": ksm(4, 4, 4)},
			steps: 3, want: []int32{8, 8, 8},
			wantQueries: []string{`sum(requests_per_second{namespace="ns",service!=""}) by (service)`},
		},
		{
			name:         "a step without the described object's value holds the replicas, whatever the other objects have",
			metricsQuery: separableService, pa: objectPA(objectMetric("web", podpilotv1alpha1.AverageValueTarget, "100")),
			answers: map[string]model.Matrix{"requests_per_second": services([]float64{nan, 900}, []float64{900, 900}),
				"kube_deployment_spec_replicas": ksm(4, 4)},
			steps: 2, want: []int32{4, 8}, noData: 1,
			wantQueries: []string{`sum(requests_per_second{namespace="ns",service!=""}) by (service)`},
		},
		{
			// web: 500 is 5; api: 700 is 7. One query serves both objects.
			name:         "two objects of one kind and metric share one query, and the larger proposal wins",
			metricsQuery: separableService,
			pa: objectPA(objectMetric("web", podpilotv1alpha1.AverageValueTarget, "100"),
				objectMetric("api", podpilotv1alpha1.AverageValueTarget, "100")),
			answers: map[string]model.Matrix{"requests_per_second": services([]float64{500}, []float64{700}),
				"kube_deployment_spec_replicas": ksm(4)},
			steps: 1, want: []int32{7},
			wantQueries: []string{`sum(requests_per_second{namespace="ns",service!=""}) by (service)`},
		},
		{
			name:         "a rule that may not ask for every object at once is asked for the described object by name, as the server does",
			metricsQuery: `sum(<<.Series>>{<<.LabelMatchers>>})`,
			pa:           objectPA(objectMetric("web", podpilotv1alpha1.AverageValueTarget, "100")),
			answers: map[string]model.Matrix{"requests_per_second": services([]float64{500}, nil),
				"kube_deployment_spec_replicas": ksm(4)},
			steps: 1, want: []int32{5},
			wantQueries: []string{`sum(requests_per_second{namespace="ns",service="web"})`},
		},
		{
			// backlog 60 over an averageValue of 10 is 6.
			name:         "a Namespace is the object named after the workload's namespace, whatever the name given",
			metricsQuery: separableService, pa: objectPA(backlog),
			answers: map[string]model.Matrix{"backlog": {stream(model.Metric{"namespace": "ns"}, 60), stream(model.Metric{"namespace": "other"}, 900)},
				"kube_deployment_spec_replicas": ksm(4)},
			steps: 1, want: []int32{6},
			wantQueries: []string{`sum(backlog{namespace!=""}) by (namespace)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sum, queries := replayObjects(t, serviceRules(t, tt.metricsQuery), tt.pa, tt.answers, tt.steps)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if sum.StepsWithoutData != tt.noData {
				t.Errorf("steps without data = %d, want %d", sum.StepsWithoutData, tt.noData)
			}
			var objects []string
			for _, q := range queries {
				if !strings.Contains(q, "kube_") {
					objects = append(objects, q)
				}
			}
			if diff := cmp.Diff(tt.wantQueries, objects); diff != "" {
				t.Errorf("queries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectMetricsReplayCannotMapAreRefused(t *testing.T) {
	rollout := podpilotv1alpha1.ObjectMetricSpec{MetricName: "requests_per_second", TargetType: podpilotv1alpha1.AverageValueTarget,
		AverageValue:    ptr.To(resource.MustParse("1")),
		DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "web"}}
	ingress := objectMetric("web", podpilotv1alpha1.AverageValueTarget, "1")
	ingress.DescribedObject = podpilotv1alpha1.MetricObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "web"}
	node := objectMetric("node-1", podpilotv1alpha1.AverageValueTarget, "1")
	node.DescribedObject = podpilotv1alpha1.MetricObjectReference{Kind: "Node", Name: "node-1"}
	tests := []struct {
		name string
		m    podpilotv1alpha1.ObjectMetricSpec
		want error
	}{
		{name: "a kind outside replay's offline resource mapping (a custom resource)", m: rollout, want: ErrUnknownKind},
		{name: "a cluster-scoped kind other than Namespace, which the controller asks for within the namespace and the server never serves", m: node, want: ErrUnsupportedSpec},
		{name: "a metric no rule serves for the described kind", m: ingress, want: ErrNoRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := SpecOf("refused", objectPA(tt.m))
			if err != nil {
				t.Fatal(err)
			}
			r := &Reader{Source: &fakeSource{series: objectSeries}, Rules: serviceRules(t, separableService), Namespace: "ns"}
			if _, err := r.Trace(t.Context(), spec, Window{From: t0, To: t0.Add(step), Step: step}); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}
