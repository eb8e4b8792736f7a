package controller

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

func TestScaledToZeroCondition(t *testing.T) {
	heldAtZero := func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Status.Conditions = []metav1.Condition{{Type: podpilotv1alpha1.ConditionScaledToZero, Status: metav1.ConditionTrue,
			Reason: "ScaledToZero", LastTransitionTime: metav1.NewTime(now)}}
	}
	tests := []struct {
		name          string
		replicas      int32
		mutate        func(*podpilotv1alpha1.PodAutoscaler)
		want          int32
		scalingActive string
		scaledToZero  string
	}{{
		name: "a rescale above zero sets ScaledToZero False with reason NotScaledToZero", replicas: 2,
		want: 3, scalingActive: "True ValidMetricFound", scaledToZero: "False NotScaledToZero",
	}, {
		name: "a target a person set to zero is disabled and gets no ScaledToZero condition", replicas: 0,
		want: 0, scalingActive: "False ScalingDisabled", scaledToZero: "<none>",
	}, {
		name:   "a target held at zero (ScaledToZero True) is evaluated, here with minReplicas raised, and its pods metric fails without pods",
		mutate: func(pa *podpilotv1alpha1.PodAutoscaler) { heldAtZero(pa); pa.Spec.MinReplicas = ptr.To[int32](1) },
		want:   0, scalingActive: "False FailedGetPodsMetric", scaledToZero: "True ScaledToZero",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mutate := func(*podpilotv1alpha1.PodAutoscaler) {}
			if tt.mutate != nil {
				mutate = tt.mutate
			}
			f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil,
				append(seedPods(int(tt.replicas)), seedDeployment(tt.replicas), seedAutoscaler(mutate))...)
			_ = f.sync() // a failing metric is also returned as an error
			pa := f.autoscaler()
			if got := f.replicas(""); got != tt.want {
				t.Errorf("replicas = %d, want %d", got, tt.want)
			}
			if got := condition(pa, podpilotv1alpha1.ConditionScalingActive); got != tt.scalingActive {
				t.Errorf("ScalingActive = %q, want %q", got, tt.scalingActive)
			}
			if got := condition(pa, podpilotv1alpha1.ConditionScaledToZero); got != tt.scaledToZero {
				t.Errorf("ScaledToZero = %q, want %q", got, tt.scaledToZero)
			}
		})
	}
}
