package status

import (
	"testing"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// TestHeldRoundsSayWhyTheyHeld checks the words of each kind of hold: they name what kept the
// replicas and the count, never a value that moves every round, so a steady hold is one
// explanation.
func TestHeldRoundsSayWhyTheyHeld(t *testing.T) {
	metric := []decision.Proposal{{Source: decision.MetricProposal, Name: "pods metric q", Replicas: 2}}
	held := func(proposed int32, changes ...string) decision.Decision {
		return decision.Decision{DesiredReplicas: 4, Explanation: decision.Explanation{Winner: "pods metric q", WinnerSource: decision.MetricProposal,
			Proposals: metric, Proposed: proposed, Desired: 4, Changes: changes}}
	}
	tests := []struct {
		name string
		d    decision.Decision
		want string
	}{
		{name: "the proposals ask for the current replicas: within tolerance", d: held(4), want: "held: within tolerance"},
		{name: "a downscale stabilization window", d: held(2, "ScaleDownStabilized: 2 to 4"), want: "held: stabilization window keeps 4"},
		{name: "an upscale stabilization window", d: held(6, "ScaleUpStabilized: 6 to 4"), want: "held: stabilization window keeps 4"},
		{name: "minReplicas", d: held(2, "TooFewReplicas: 2 to 4"), want: "held: minReplicas keeps 4"},
		{name: "maxReplicas", d: held(6, "TooManyReplicas: 6 to 4"), want: "held: maxReplicas keeps 4"},
		{name: "scaling policies (e.g. selectPolicy Disabled)", d: held(6, "ScaleUpLimit: 6 to 4"), want: "held: scaling policies keep 4"},
		{name: "the last change is what kept them", d: held(2, "ScaleDownStabilized: 2 to 3", "TooFewReplicas: 3 to 4"), want: "held: minReplicas keeps 4"},
		{
			name: "a schedule window's floor",
			d: decision.Decision{DesiredReplicas: 4, Explanation: decision.Explanation{Winner: "schedule window rush", WinnerSource: decision.ScheduleProposal,
				Proposals: metric, Proposed: 2, Desired: 4}},
			want: "held: schedule window rush keeps 4",
		},
		{
			name: "metrics that could not be used name the ScalingActive reason",
			d: decision.Decision{DesiredReplicas: 4, Conditions: []decision.Condition{{Type: decision.ScalingActive, Reason: decision.ReasonFailedGetExternalMetric,
				Message: "the PodAutoscaler was unable to compute the replica count: a message that changes"}}},
			want: "held: FailedGetExternalMetric (see condition ScalingActive)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, pa := &podpilotv1alpha1.PodAutoscaler{}, &podpilotv1alpha1.PodAutoscaler{}
			RecordLastDecision(base, pa, tc.d, 4, now)
			ld := pa.Status.LastDecision
			if ld == nil || ld.Winner != tc.want || ld.FromReplicas != 4 || ld.ToReplicas != 4 {
				t.Errorf("lastDecision = %+v, want 4 to 4 %q", ld, tc.want)
			}
		})
	}
}
