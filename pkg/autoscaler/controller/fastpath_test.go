package controller

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// TestPredictionSurvivesEveryFastPath checks that a PodAutoscaler with spec.prediction, in
// either mode, takes each fast path of the decision (replicas above maxReplicas, below
// minReplicas, below a schedule floor, at zero) without a panic: the forecasts are joined to the
// metrics by identity, and a fast path's decision has no metric statuses (issue 27, critical 1).
func TestPredictionSurvivesEveryFastPath(t *testing.T) {
	paths := []struct {
		name     string
		replicas int32
		mutate   func(*podpilotv1alpha1.PodAutoscaler)
		want     int32
	}{
		{name: "replicas above maxReplicas are brought down to it", replicas: 7, mutate: func(*podpilotv1alpha1.PodAutoscaler) {}, want: 5},
		{name: "replicas below minReplicas are brought up to it", replicas: 1,
			mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Spec.MinReplicas = ptr.To[int32](3) }, want: 3},
		{name: "replicas below an active schedule floor are brought up to it", replicas: 1,
			mutate: withSchedules(window("business", 4)), want: 4},
		{name: "a target at zero stays disabled", replicas: 0, mutate: func(*podpilotv1alpha1.PodAutoscaler) {}, want: 0},
	}
	for _, mode := range []podpilotv1alpha1.PredictionMode{podpilotv1alpha1.PredictionForecastOnly, podpilotv1alpha1.PredictionScaleOut} {
		for _, p := range paths {
			t.Run(fmt.Sprintf("%s: %s", mode, p.name), func(t *testing.T) {
				h := &fakeHistory{load: eveningRush}
				f := newFixture(t, qpsPerPod("1000", podNames(1)...), nil,
					append(seedPods(1), seedDeployment(p.replicas),
						seedAutoscaler(checkpointed(p.replicas), predicting(mode), p.mutate))...)
				f.history = h
				f.restart()
				f.syncAt(now)
				if got := f.replicas("deployment"); got != p.want {
					t.Errorf("replicas = %d, want %d", got, p.want)
				}
				f.syncAt(now.Add(15 * time.Second))
			})
		}
	}
}

// TestMetricListsAreJoinedByIdentity checks that status.targets and the per-object series find a
// metric's status by its identity, not by its position: a list shorter than the spec's (a fast
// path, an older status) or in another order shows each value at its own metric.
func TestMetricListsAreJoinedByIdentity(t *testing.T) {
	pa := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{
			{ResourceName: corev1.ResourceCPU, Container: "app", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))},
			{ResourceName: corev1.ResourceCPU, Container: "sidecar", TargetType: podpilotv1alpha1.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))},
		}
	})
	sidecar := decision.MetricStatus{Kind: decision.ContainerResourceMetric, Name: "cpu",
		Target: replicas.Target{Type: replicas.AverageValue, Resource: corev1.ResourceCPU, Container: "sidecar"}, Result: replicas.Result{AverageValue: 300}}
	if got, want := status.TargetsOf(pa, []decision.MetricStatus{sidecar}), "<unknown>/2k, <unknown>/1, 300m/1"; got != want {
		t.Errorf("status.targets = %q, want %q: only the sidecar's cpu has a status", got, want)
	}
	pa.Status.CurrentMetrics = []podpilotv1alpha1.MetricStatus{
		{Type: podpilotv1alpha1.ContainerResourceMetricSourceType, Name: "cpu", Container: "sidecar", AverageValue: ptr.To(resource.MustParse("300m"))},
	}
	for _, m := range metricsOfObject(pa) {
		if m.hasValue && m.container != "sidecar" {
			t.Errorf("metric %s/%s of container %q shows the sidecar's value %g", m.typ, m.name, m.container, m.value)
		}
	}
}
