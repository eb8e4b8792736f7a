package controller

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// TestAnUnrepresentableOrNegativeValueHoldsWithACondition checks issue 21 §1 through a round:
// a per-pod value MilliValue reads as 0, or a negative one, fails the metric with a
// ScalingActive condition saying why, and the replicas are held.
func TestAnUnrepresentableOrNegativeValueHoldsWithACondition(t *testing.T) {
	tests := []struct {
		name, value, wantMsg string
	}{
		{name: "9.3e15 per pod is out of range, not 0", value: "9.3e15", wantMsg: "metric value out of the range the autoscaler computes with"},
		{name: "a negative value per pod is not data", value: "-5", wantMsg: "negative metric value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, qpsPerPod(tc.value, podNames(4)...), nil, append(seedPods(4), seedDeployment(4), seedAutoscaler())...)
			if err := f.sync(); err != nil {
				t.Fatalf("sync: %v", err)
			}
			got, _ := outcomeOf(f, "")
			want := outcome{Replicas: 4, Current: 4, Desired: 4, Targets: "<unknown>/2k",
				Conditions: map[string]string{"AbleToScale": "True SucceededGetScale", "ScalingActive": "False FailedGetPodsMetric", "ScalingLimited": "<none>"},
				Events:     []string{"Warning FailedGetPodsMetric"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
			for _, c := range f.autoscaler().Status.Conditions {
				if c.Type == podpilotv1alpha1.ConditionScalingActive && !strings.Contains(c.Message, tc.wantMsg) {
					t.Errorf("ScalingActive message %q does not say %q", c.Message, tc.wantMsg)
				}
			}
		})
	}
}
