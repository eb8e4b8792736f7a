package replay

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

var posInf = math.Inf(1)

// stream is one series with labels and a sample at each step from t0 (none where NaN).
func stream(labels model.Metric, values ...float64) *model.SampleStream {
	s := podSeries("", values...)
	s.Metric = labels
	return s
}

// ksm is kube-state-metrics' replicas series of the target, one value at each step.
func ksm(values ...float64) model.Matrix {
	return model.Matrix{stream(model.Metric{}, values...)}
}

// externalPA is a PodAutoscaler of web, 1 to 20 replicas, with the given external metrics.
func externalPA(ms ...podpilotv1alpha1.ExternalMetricSpec) *podpilotv1alpha1.PodAutoscaler {
	return &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "web",
		MinReplicas: ptr.To[int32](1), MaxReplicas: 20, ExternalMetrics: ms,
	}}
}

// queueDepth is the external metric queue_depth with an AverageValue target.
func queueDepth(average string) podpilotv1alpha1.ExternalMetricSpec {
	return podpilotv1alpha1.ExternalMetricSpec{MetricName: "queue_depth", TargetType: podpilotv1alpha1.AverageValueTarget,
		AverageValue: ptr.To(resource.MustParse(average))}
}

// externalSeries are the series discovery finds: queue_depth of two queues, and web's per-pod qps.
var externalSeries = []model.LabelSet{
	{"__name__": "queue_depth", "namespace": "ns", "queue": "a"},
	{"__name__": "queue_depth", "namespace": "ns", "queue": "b"},
	{"__name__": "zdns_vanguard_queries_total", "namespace": "ns", "pod": "web-5d8f7c9b4-aaaaa"},
}

// replayed reads pa's trace through the default rules from a source answering answers, and
// replays it; it returns the replayed replicas, the summary and the queries asked.
func replayed(t *testing.T, pa *podpilotv1alpha1.PodAutoscaler, answers map[string]model.Matrix, n int, m Model) ([]int32, Summary, []string) {
	t.Helper()
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := SpecOf("spec", pa)
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{series: externalSeries, answers: answers}
	r := &Reader{Source: src, Rules: set, Namespace: "ns"}
	w := Window{From: t0, To: t0.Add(time.Duration(n-1) * step), Step: step}
	tr, err := r.Trace(t.Context(), spec, w)
	if err != nil {
		t.Fatal(err)
	}
	steps := Simulate(spec, tr, m)
	reps, _ := replicasOf(steps)
	return reps, Summarize(spec, steps, step, nil), src.queries
}

func TestExternalMetricsReplayAsTheControllerDecides(t *testing.T) {
	twoQueues := func(a, b []float64) model.Matrix {
		return model.Matrix{stream(model.Metric{"queue": "a"}, a...), stream(model.Metric{"queue": "b"}, b...)}
	}
	fallback := queueDepth("100")
	fallback.Fallback = &podpilotv1alpha1.ExternalMetricFallback{Replicas: 6}
	latency := podpilotv1alpha1.ExternalMetricSpec{MetricName: "queue_depth", TargetType: podpilotv1alpha1.ValueTarget, Value: ptr.To(resource.MustParse("50"))}
	qps := podpilotv1alpha1.CustomMetricSpec{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse("2000")}
	withPods := func(pa *podpilotv1alpha1.PodAutoscaler) *podpilotv1alpha1.PodAutoscaler {
		pa.Spec.CustomMetrics = []podpilotv1alpha1.CustomMetricSpec{qps}
		return pa
	}
	nans := func(n int) []float64 { return nanSlice(n) }
	tests := []struct {
		name      string
		pa        *podpilotv1alpha1.PodAutoscaler
		answers   map[string]model.Matrix
		steps     int
		downscale time.Duration
		want      []int32
		noData    int
	}{
		{
			// The controller's calculator (replicas.CalculateExternal) sums the series: 400, then
			// 1000 over an averageValue of 100 is 10 replicas, which the default scale-up rate
			// limits to max(2 x 4, 4) = 8 at the first step that sees it.
			name:    "an External AverageValue target over a step series gives the replicas the controller's calculator gives, the series summed",
			pa:      externalPA(queueDepth("100")),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{300, 300, 600, 600}, []float64{100, 100, 400, 400}), "kube_deployment_spec_replicas": ksm(4, 4, 4, 4)},
			steps:   4, want: []int32{4, 4, 8, 10},
		},
		{
			name:    "a step without data holds the replicas, and is counted as without data",
			pa:      externalPA(queueDepth("100")),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{nan, nan, 600}, []float64{nan, nan, 400}), "kube_deployment_spec_replicas": ksm(4, 4, 4)},
			steps:   3, want: []int32{4, 4, 8}, noData: 2,
		},
		{
			name: "a step without data never scales down, where the data that comes next does",
			pa:   externalPA(queueDepth("100")),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{400, nan, nan, 100}, []float64{400, nan, nan, 0}),
				"kube_deployment_spec_replicas": ksm(8, 8, 8, 8)},
			steps: 4, want: []int32{8, 8, 8, 1}, noData: 2,
		},
		{
			name: "a step whose every series is ±Inf has no data, as the server drops those samples; a finite series beside one still counts",
			pa:   externalPA(queueDepth("100")),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{400, posInf, 800}, []float64{posInf, posInf, posInf}),
				"kube_deployment_spec_replicas": ksm(4, 4, 4)},
			steps: 3, want: []int32{4, 4, 8}, noData: 1,
		},
		{
			// failureDurationSeconds defaults to 180 s: 12 steps of 15 s after the first failure.
			name: "an External metric's fallback applies once it has failed for failureDurationSeconds, as in the controller",
			pa:   externalPA(fallback),
			answers: map[string]model.Matrix{"queue_depth": twoQueues(nans(14), nans(14)),
				"kube_deployment_spec_replicas": ksm(4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4)},
			steps: 14, want: []int32{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 6, 6}, noData: 14,
		},
		{
			// 100 at 4 actual replicas is a load of 400: 100 per replayed pod, twice the target,
			// 8 pods; on 8 pods the same load reads 50, at target.
			name:    "a Value target reads the value as a load spread over the replicas that had it, which the replayed pods share",
			pa:      externalPA(latency),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{60, 60, 60}, []float64{40, 40, 40}), "kube_deployment_spec_replicas": ksm(4, 4, 4)},
			steps:   3, want: []int32{8, 8, 8},
		},
		{
			// qps: 4000 over 4 pods at 2000 each is 2 replicas; queue_depth 500 at 100 each is 5.
			name: "a spec mixing pods and external metrics takes the larger proposal, the external one",
			pa:   withPods(externalPA(queueDepth("100"))),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{250, 250}, []float64{250, 250}),
				"zdns_vanguard_queries_total": {podSeries("web-5d8f7c9b4-aaaaa", 4000, 4000)}, "kube_deployment_spec_replicas": ksm(4, 4)},
			steps: 2, want: []int32{5, 5},
		},
		{
			// qps: 14000 is 7 replicas; queue_depth 500 is 5.
			name: "a spec mixing pods and external metrics takes the larger proposal, the pods one",
			pa:   withPods(externalPA(queueDepth("100"))),
			answers: map[string]model.Matrix{"queue_depth": twoQueues([]float64{250, 250}, []float64{250, 250}),
				"zdns_vanguard_queries_total": {podSeries("web-5d8f7c9b4-aaaaa", 14000, 14000)}, "kube_deployment_spec_replicas": ksm(4, 4)},
			steps: 2, want: []int32{7, 7},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sum, _ := replayed(t, tt.pa, tt.answers, tt.steps, testModel(0, tt.downscale))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if sum.StepsWithoutData != tt.noData {
				t.Errorf("steps without data = %d, want %d", sum.StepsWithoutData, tt.noData)
			}
		})
	}
}

func TestExternalAverageValueProposalIsTheCalculators(t *testing.T) {
	// The first step's decision, unlimited by any rate (4 to 5 is within max(2 x 4, 4)), is
	// exactly CalculateExternal's proposal for the two series' values.
	want, err := replicas.CalculateExternal(replicas.ExternalInput{SpecReplicas: 4, StatusReplicas: 4,
		Target: replicas.Target{Type: replicas.AverageValue, AverageValue: 100_000}, Values: []int64{300_000, 170_000},
		Tolerances: replicas.DefaultConfig().Tolerances})
	if err != nil {
		t.Fatal(err)
	}
	answers := map[string]model.Matrix{"queue_depth": {stream(model.Metric{"queue": "a"}, 300), stream(model.Metric{"queue": "b"}, 170)},
		"kube_deployment_spec_replicas": ksm(4)}
	got, _, _ := replayed(t, externalPA(queueDepth("100")), answers, 1, testModel(0, 0))
	if got[0] != want.Replicas || want.Replicas != 5 {
		t.Errorf("replayed %d replicas, the calculator proposes %d (want 5)", got[0], want.Replicas)
	}
}

func TestExternalMetricsCostOneQueryPerNamespaceMetricAndSelector(t *testing.T) {
	depth := queueDepth("100")
	depthA := queueDepth("50")
	depthA.Selector = &podpilotv1alpha1.MetricSelector{MatchLabels: map[string]string{"queue": "a"}}
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{series: externalSeries, answers: map[string]model.Matrix{"kube_deployment_spec_replicas": ksm(4, 4)}}
	memo := NewRangeMemo()
	w := Window{From: t0, To: t0.Add(step), Step: step}
	// Two specs read queue_depth with the same selector, one with another: two queries.
	for _, pa := range []*podpilotv1alpha1.PodAutoscaler{externalPA(depth), externalPA(queueDepth("200"), depthA)} {
		spec, err := SpecOf("spec", pa)
		if err != nil {
			t.Fatal(err)
		}
		r := &Reader{Source: src, Rules: set, Namespace: "ns", Memo: memo}
		if _, err := r.Trace(t.Context(), spec, w); err != nil {
			t.Fatal(err)
		}
	}
	var external []string
	for _, q := range src.queries {
		if strings.Contains(q, "queue_depth") {
			external = append(external, q)
		}
	}
	want := []string{`sum(queue_depth{namespace="ns"})`, `sum(queue_depth{queue="a",namespace="ns"})`}
	if diff := cmp.Diff(want, external); diff != "" {
		t.Errorf("queries of queue_depth (-want +got):\n%s", diff)
	}
}

func TestAValueTargetWithoutActualReplicasIsRefused(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	latency := podpilotv1alpha1.ExternalMetricSpec{MetricName: "queue_depth", TargetType: podpilotv1alpha1.ValueTarget, Value: ptr.To(resource.MustParse("50"))}
	spec, err := SpecOf("value", externalPA(latency))
	if err != nil {
		t.Fatal(err)
	}
	// No kube-state-metrics series and no per-pod metric: nothing says how many replicas had the value.
	src := &fakeSource{series: externalSeries, answers: map[string]model.Matrix{"queue_depth": {stream(model.Metric{}, 100, 100)}}}
	r := &Reader{Source: src, Rules: set, Namespace: "ns"}
	if _, err := r.Trace(t.Context(), spec, Window{From: t0, To: t0.Add(step), Step: step}); !errors.Is(err, ErrUnsupportedSpec) {
		t.Errorf("err = %v, want %v", err, ErrUnsupportedSpec)
	}
}

func TestExternalHistoryForTheForecastSumsTheSeries(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pa := externalPA(queueDepth("100"))
	pa.Spec.Prediction = &podpilotv1alpha1.PredictionSpec{Mode: podpilotv1alpha1.PredictionScaleOut}
	spec, err := SpecOf("forecast", pa)
	if err != nil {
		t.Fatal(err)
	}
	// The history's values are at the middle of its one-minute steps: 07:58:30, 07:59:30, 08:00:30.
	at := func(labels model.Metric, values ...float64) *model.SampleStream {
		s := &model.SampleStream{Metric: labels}
		for i, v := range values {
			ts := t0.Add(-90*time.Second + time.Duration(i)*time.Minute)
			s.Values = append(s.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(ts.UnixNano()), Value: model.SampleValue(v)})
		}
		return s
	}
	src := &fakeSource{series: externalSeries, answers: map[string]model.Matrix{
		"queue_depth": {at(model.Metric{"queue": "a"}, 100, 200, 300), at(model.Metric{"queue": "b"}, 10, 20, 30)}}}
	r := &Reader{Source: src, Rules: set, Namespace: "ns"}
	h, err := r.History(t.Context(), spec, Window{From: t0, To: t0, Step: step}, 2*time.Minute, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || !equalFloats(h[0].Values, []float64{110, 220, 330}) {
		t.Errorf("history %+v, want one series of the two queues summed: 110, 220, 330", h)
	}
}
