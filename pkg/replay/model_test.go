package replay

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

var t0 = time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)

const step = 15 * time.Second

var nan = math.NaN()

// qpsSpec is a PodAutoscaler on zdns_vanguard_qps with an averageValue target, 1 to 10 replicas.
func qpsSpec(t *testing.T, target string) Spec {
	t.Helper()
	pa := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard",
		MinReplicas: ptr.To[int32](1), MaxReplicas: 10,
		CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse(target)}},
	}}
	s, err := SpecOf("qps-"+target, pa)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// trace builds a trace with one metric, one step apart from t0.
func trace(actual, load []float64) Trace {
	tr := Trace{Actual: actual, Loads: [][]float64{load}}
	for i := range load {
		tr.Times = append(tr.Times, t0.Add(time.Duration(i)*step))
	}
	return tr
}

func testModel(readyDelay, downscale time.Duration) Model {
	cfg := decision.DefaultConfig()
	cfg.DownscaleStabilizationWindow = downscale
	return Model{Config: cfg, SyncPeriod: step, ReadyDelay: readyDelay}
}

// replicasOf returns the replayed replicas and ready pods of each step.
func replicasOf(steps []Step) (reps, ready []int32) {
	for _, s := range steps {
		reps, ready = append(reps, s.Replicas), append(ready, s.Ready)
	}
	return reps, ready
}

func TestLoadModel(t *testing.T) {
	tests := []struct {
		name        string
		target      string
		actual      []float64
		load        []float64
		readyDelay  time.Duration
		downscale   time.Duration
		wantReps    []int32
		wantReady   []int32
		wantPerPod0 float64
	}{
		{
			name: "a load at target spread over the actual replicas keeps them", target: "2000",
			actual: []float64{3, 3, 3}, load: []float64{6000, 6000, 6000},
			wantReps: []int32{3, 3, 3}, wantReady: []int32{3, 3, 3}, wantPerPod0: 2000,
		},
		{
			name: "a load step scales towards ceil(load / target) from the step that sees it, at most to max(2 x current, 4) per step", target: "2000",
			actual: []float64{2, 2, 2}, load: []float64{4000, 10000, 10000},
			wantReps: []int32{2, 4, 5}, wantReady: []int32{2, 2, 4}, wantPerPod0: 2000,
		},
		{
			name: "new pods carry no load until --ready-delay has passed", target: "2000",
			actual: []float64{2, 2, 2, 2}, load: []float64{10000, 10000, 10000, 10000}, readyDelay: 30 * time.Second,
			wantReps: []int32{4, 5, 5, 5}, wantReady: []int32{2, 2, 4, 5}, wantPerPod0: 5000,
		},
		{
			name: "a step without data holds the replicas", target: "2000",
			actual: []float64{2, 2, 2}, load: []float64{nan, nan, 9000},
			wantReps: []int32{2, 2, 4}, wantReady: []int32{2, 2, 2}, wantPerPod0: nan,
		},
		{
			name: "a step whose load is +Inf (a rule dividing by zero) or beyond int64 milli-units holds the replicas, as the live metric fails", target: "2000",
			actual: []float64{2, 2, 2, 2}, load: []float64{4000, math.Inf(1), 1e300, 9000},
			wantReps: []int32{2, 2, 2, 4}, wantReady: []int32{2, 2, 2, 2}, wantPerPod0: 2000,
		},
		{
			name: "the replay starts from the first known actual replicas, clamped to maxReplicas", target: "2000",
			actual: []float64{nan, 12, 12}, load: []float64{20000, 20000, 20000},
			wantReps: []int32{10, 10, 10}, wantReady: []int32{10, 10, 10}, wantPerPod0: 2000,
		},
		{
			name: "a drop in load scales down only after the downscale stabilization window", target: "2000",
			actual: []float64{4, 4, 4, 4, 4, 4}, load: []float64{8000, 2000, 2000, 2000, 2000, 2000}, downscale: 45 * time.Second,
			wantReps: []int32{4, 4, 4, 4, 1, 1}, wantReady: []int32{4, 4, 4, 4, 4, 1}, wantPerPod0: 2000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := Simulate(qpsSpec(t, tt.target), trace(tt.actual, tt.load), testModel(tt.readyDelay, tt.downscale))
			reps, ready := replicasOf(steps)
			if diff := cmp.Diff(tt.wantReps, reps); diff != "" {
				t.Errorf("replicas (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantReady, ready); diff != "" {
				t.Errorf("ready pods (-want +got):\n%s", diff)
			}
			if got := steps[0].PerPod[0]; !(got == tt.wantPerPod0 || math.IsNaN(got) && math.IsNaN(tt.wantPerPod0)) {
				t.Errorf("load per pod at the first step = %g, want %g", got, tt.wantPerPod0)
			}
		})
	}
}

func TestUtilizationIsUsageSummedOverPodsAgainstTheRequests(t *testing.T) {
	pa := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "web", MaxReplicas: 10,
		ResourceMetrics: []podpilotv1alpha1.ResourceMetricSpec{{ResourceName: corev1.ResourceCPU,
			TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}},
	}}
	spec, err := SpecOf("cpu", pa)
	if err != nil {
		t.Fatal(err)
	}
	m := testModel(0, time.Minute)
	m.Requests.Pod = map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}
	// 1.5 cores over 2 pods of 500m is 150%; at 50% of 500m per pod that is 6 pods, reached in
	// two steps of at most doubling.
	steps := Simulate(spec, trace([]float64{2, 2}, []float64{1.5, 1.5}), m)
	if reps, _ := replicasOf(steps); !cmp.Equal(reps, []int32{4, 6}) {
		t.Errorf("replicas = %v, want [4 6]", reps)
	}
	if got := TargetPerPod(spec.Metrics[0].Target, &m.Requests); got != 0.25 {
		t.Errorf("target per pod = %g cores, want 0.25", got)
	}
}

func TestSumPodsKeepsOnlyTheWorkloadsPods(t *testing.T) {
	pa := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard"}}
	re := podNamePattern(pa)
	for name, want := range map[string]bool{
		"vg1-vanguard-7d9f8b6c5d-x2x9q": true, "vg1-vanguard-canary-7d9f8b6c5d-x2x9q": false, "vg1-vanguard-0": false,
	} {
		if re.MatchString(name) != want {
			t.Errorf("pattern %s matches %s = %v, want %v", re, name, !want, want)
		}
	}
}

func TestSpecsReplayCannotModelAreRefused(t *testing.T) {
	value := podpilotv1alpha1.ExternalMetricSpec{MetricName: "latency", TargetType: podpilotv1alpha1.ValueTarget, Value: ptr.To(resource.MustParse("1"))}
	tests := []struct {
		name string
		spec podpilotv1alpha1.PodAutoscalerSpec
	}{
		{
			name: "a spec without any metric",
			spec: podpilotv1alpha1.PodAutoscalerSpec{},
		},
		{
			name: "spec.prediction with a Value target on an External metric: replay spreads that value over the replicas, its forecast does not",
			spec: podpilotv1alpha1.PodAutoscalerSpec{ExternalMetrics: []podpilotv1alpha1.ExternalMetricSpec{value},
				Prediction: &podpilotv1alpha1.PredictionSpec{Mode: podpilotv1alpha1.PredictionScaleOut}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pa := &podpilotv1alpha1.PodAutoscaler{Spec: tt.spec}
			pa.Spec.ScaleTargetKind, pa.Spec.ScaleTargetName, pa.Spec.MaxReplicas = podpilotv1alpha1.ScaleTargetDeployment, "web", 10
			if _, err := SpecOf("refused", pa); !errors.Is(err, ErrUnsupportedSpec) {
				t.Errorf("err = %v, want %v", err, ErrUnsupportedSpec)
			}
		})
	}
}
