package controller

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// TestAForecastWithinTheScaleDownToleranceHoldsTheReplicasAndSaysSo checks the forecast's
// tolerance through the controller: 6 pods at 500 qps (the metrics ask for 2), a forecast of the
// evening rush asking for 5, a scale-down tolerance of 0.2 and no stabilization window. 5 of 6 is
// within the tolerance, so the forecast holds the 6 replicas, and the status says the forecast
// raised the proposal, to 6; before the tolerance the round scaled down to the forecast's 5.
func TestAForecastWithinTheScaleDownToleranceHoldsTheReplicasAndSaysSo(t *testing.T) {
	f := newFixture(t, qpsPerPod("500", podNames(6)...), nil,
		append(seedPods(6), seedDeployment(6), seedAutoscaler(checkpointed(6), predicting(podpilotv1alpha1.PredictionScaleOut),
			func(pa *podpilotv1alpha1.PodAutoscaler) {
				pa.Spec.MaxReplicas = 10
				pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{ScaleDown: &podpilotv1alpha1.ScalingRules{
					StabilizationWindowSeconds: ptr.To[int32](0), Tolerance: ptr.To(resource.MustParse("0.2"))}}
			}))...)
	f.history = &fakeHistory{Load: eveningRush}
	f.restart()
	f.fitAt(now)
	f.syncAt(now)
	pa := f.autoscaler()
	if p := pa.Status.Prediction; p == nil || p.Replicas != 6 || len(p.Metrics) != 1 || p.Metrics[0].Replicas != 5 {
		t.Fatalf("%s; status.prediction = %+v, want the forecast's proposal 6 (the round's own 5, held at 6 by the tolerance)", describe(pa), p)
	}
	if got := f.replicas("deployment"); got != 6 {
		t.Errorf("replicas = %d, want 6: the forecast's 5 is within the tolerance of 6", got)
	}
	if got := condition(pa, podpilotv1alpha1.ConditionPredictionActive); got != "True ForecastRaised" {
		t.Errorf("PredictionActive = %s (%s)", got, describe(pa))
	}
}
