package replay

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// decidedSteps builds replay steps with the given replicas, one step apart from t0.
func decidedSteps(reps ...int32) []Step {
	out := make([]Step, 0, len(reps))
	for i, r := range reps {
		out = append(out, Step{Time: t0.Add(time.Duration(i) * step), Replicas: r})
	}
	return out
}

func TestCompareRecorded(t *testing.T) {
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * step) }
	tests := []struct {
		name     string
		steps    []Step
		recorded []float64
		want     HPAComparison
	}{
		{name: "a replay equal to the record at every step is the same",
			steps: decidedSteps(2, 2, 3, 3), recorded: []float64{2, 2, 3, 3},
			want: HPAComparison{Recorded: true, Compared: 4}},
		{name: "a rescale one step after the HPA's is a timing difference, within the allowance",
			steps: decidedSteps(2, 2, 3, 3), recorded: []float64{2, 3, 3, 3},
			want: HPAComparison{Recorded: true, Compared: 4, Differ: 1, First: []DiffStep{{Time: at(1), HPA: 3, PodAutoscaler: 2, Timing: true}}}},
		{name: "a rescale one step before the HPA's is a timing difference too",
			steps: decidedSteps(2, 3, 3), recorded: []float64{2, 2, 3},
			want: HPAComparison{Recorded: true, Compared: 3, Differ: 1, First: []DiffStep{{Time: at(1), HPA: 2, PodAutoscaler: 3, Timing: true}}}},
		{name: "replicas neither side reaches within one step of the other differ beyond the allowance",
			steps: decidedSteps(2, 2, 2), recorded: []float64{2, 4, 4},
			want: HPAComparison{Recorded: true, Compared: 3, Differ: 2, Beyond: 1, First: []DiffStep{
				{Time: at(2), HPA: 4, PodAutoscaler: 2}, {Time: at(1), HPA: 4, PodAutoscaler: 2, Timing: true}}}},
		{name: "steps without a record are not compared",
			steps: decidedSteps(2, 5, 2), recorded: []float64{2, nan, 2},
			want: HPAComparison{Recorded: true, Compared: 2}},
		{name: "no record at any step is no recorded HPA history",
			steps: decidedSteps(2, 2), recorded: []float64{nan, nan},
			want: HPAComparison{}},
		{name: "at most five differing steps are shown, those beyond the allowance first",
			steps: decidedSteps(1, 1, 1, 1, 1, 1, 1, 1), recorded: []float64{9, 9, 9, 9, 9, 9, 9, 9},
			want: HPAComparison{Recorded: true, Compared: 8, Differ: 8, Beyond: 8, First: []DiffStep{
				{Time: at(0), HPA: 9, PodAutoscaler: 1}, {Time: at(1), HPA: 9, PodAutoscaler: 1}, {Time: at(2), HPA: 9, PodAutoscaler: 1},
				{Time: at(3), HPA: 9, PodAutoscaler: 1}, {Time: at(4), HPA: 9, PodAutoscaler: 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, CompareRecorded(tt.steps, tt.recorded)); diff != "" {
				t.Errorf("CompareRecorded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompareHPAReadsTheHPAsRecordedDesiredReplicas: the replay of the PodAutoscaler against
// kube-state-metrics' desired replicas of the HPA of that name and namespace, on the fake source.
func TestCompareHPAReadsTheHPAsRecordedDesiredReplicas(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	qps := model.Matrix{podSeries("vg1-vanguard-5d8f7c9b4-aaaaa", 2000, 2000, 2000), podSeries("vg1-vanguard-5d8f7c9b4-bbbbb", 2000, 2000, 2000)}
	ksm := func(v ...float64) model.Matrix {
		return model.Matrix{&model.SampleStream{Values: podSeries("", v...).Values}}
	}
	discovered := []model.LabelSet{{"__name__": "zdns_vanguard_qps", "namespace": "ns", "pod": "vg1-vanguard-5d8f7c9b4-aaaaa"}}
	tests := []struct {
		name    string
		answers map[string]model.Matrix
		want    HPAComparison
	}{
		{name: "the HPA's recorded desired replicas are compared step by step with the replay's",
			answers: map[string]model.Matrix{"zdns_vanguard_qps": qps, "kube_deployment_spec_replicas": ksm(2, 2, 2),
				`kube_horizontalpodautoscaler_status_desired_replicas{namespace="ns",horizontalpodautoscaler="vg1"}`: ksm(2, 2, 2)},
			want: HPAComparison{Recorded: true, Compared: 3}},
		{name: "an HPA that held more replicas than the replay's differs at each step",
			answers: map[string]model.Matrix{"zdns_vanguard_qps": qps, "kube_deployment_spec_replicas": ksm(2, 2, 2),
				`kube_horizontalpodautoscaler_status_desired_replicas{namespace="ns",horizontalpodautoscaler="vg1"}`: ksm(3, 3, 3),
				`horizontalpodautoscaler="other"`: ksm(2, 2, 2)},
			want: HPAComparison{Recorded: true, Compared: 3, Differ: 3, Beyond: 3, First: []DiffStep{
				{Time: t0, HPA: 3, PodAutoscaler: 2}, {Time: t0.Add(step), HPA: 3, PodAutoscaler: 2}, {Time: t0.Add(2 * step), HPA: 3, PodAutoscaler: 2}}}},
		{name: "without kube-state-metrics' HPA series there is no recorded HPA history",
			answers: map[string]model.Matrix{"zdns_vanguard_qps": qps, "kube_deployment_spec_replicas": ksm(2, 2, 2)},
			want:    HPAComparison{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{Source: &fakeSource{series: discovered, answers: tt.answers}, Rules: set,
				Window: Window{From: t0, To: t0.Add(2 * step), Step: step}, Model: testModel(0, 0)}
			got, err := s.CompareHPA(t.Context(), qpsSpec(t, "2000"), "ns", "vg1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CompareHPA (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompareHPARefusesWhatReplayRefuses: a spec replay cannot model is an error, never a
// comparison of nothing.
func TestCompareHPARefusesWhatReplayRefuses(t *testing.T) {
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cpu := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "web", MaxReplicas: 5,
		ResourceMetrics: []podpilotv1alpha1.ResourceMetricSpec{{ResourceName: "cpu", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](60)}},
	}}
	cpuSpec, err := SpecOf("web", cpu)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		spec Spec
		want error
	}{
		{name: "a Utilization target without --pod-requests is refused", spec: cpuSpec, want: ErrUnsupportedSpec},
		{name: "a metric no rule serves is refused", spec: qpsSpec(t, "2000"), want: ErrNoRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{Source: &fakeSource{}, Rules: set, Window: Window{From: t0, To: t0.Add(step), Step: step}, Model: testModel(0, 0)}
			if _, err := s.CompareHPA(t.Context(), tt.spec, "ns", "web"); !errors.Is(err, tt.want) {
				t.Errorf("CompareHPA = %v, want %v", err, tt.want)
			}
		})
	}
}
