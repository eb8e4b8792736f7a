package controller

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
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
				h := &fakeHistory{Load: eveningRush}
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
