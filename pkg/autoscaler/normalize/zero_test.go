package normalize

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNormalizeAtZero: minReplicas 0 lets a scale-down reach zero, and the scale-up limits from
// zero are upstream's formulas with a period start of 0 plus the scale-downs within the period.
func TestNormalizeAtZero(t *testing.T) {
	noWindow := dur(0)
	percentOnly := &Behavior{ScaleUp: &Rules{Policies: []Policy{percentPolicy(100, time.Minute)}}, ScaleDown: &Rules{StabilizationWindow: noWindow}}
	tests := []struct {
		name             string
		behavior         *Behavior
		current, desired int32
		minReplicas      int32
		history          History
		want             outcome
	}{{
		name:     "with minReplicas 0 the default scale-down policy (100% per 15 s) reaches zero",
		behavior: &Behavior{ScaleDown: &Rules{StabilizationWindow: noWindow}},
		current:  3, desired: 0,
		want: outcome{Replicas: 0, Stabilized: 0, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "without behavior minReplicas 0 lets the stabilized proposal reach zero",
		current: 3, desired: 0,
		history: recs(Recommendation{Replicas: 3, Time: ago(10 * time.Minute)}, Recommendation{Replicas: 0, Time: ago(9 * time.Minute)}),
		want:    outcome{Replicas: 0, Stabilized: 0, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		// Default policies from 0: Percent 100 → ceil(0 × 2) = 0, Pods 4 → 4; Max → 4.
		name:     "from zero the default scale-up policies allow 4 (the Pods policy)",
		behavior: &Behavior{},
		current:  0, desired: 10,
		want: outcome{Replicas: 4, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		// Percent 100 per 60 s from 0 with no event in the period: ceil(0 × 2) = 0, so the limit is
		// current (0), as upstream's calculateScaleUpLimitWithScalingRules.
		name:     "from zero a Percent-only scale-up policy allows nothing without scale-downs in its period",
		behavior: percentOnly,
		current:  0, desired: 3,
		want: outcome{Replicas: 0, Stabilized: 3, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		// 3 → 0 thirty seconds ago: start = 0 - 0 + 3 = 3 → ceil(3 × 2) = 6 ≥ 5.
		name:     "from zero a Percent-only scale-up policy counts the scale-down to zero within its period",
		behavior: percentOnly,
		current:  0, desired: 5,
		history: History{ScaleDownEvents: []ScaleEvent{{Change: 3, Time: ago(30 * time.Second)}}},
		want:    outcome{Replicas: 5, Stabilized: 5, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "without behavior the scale-up limit from zero is max(2 × 0, 4) = 4",
		current: 0, desired: 10,
		want: outcome{Replicas: 4, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.history
			if len(h.Recommendations) == 0 {
				h.Recommendations = []Recommendation{{Replicas: tc.current, Time: ago(time.Hour)}}
			}
			got := Normalize(Input{Current: tc.current, Desired: tc.desired, Min: tc.minReplicas, Max: 10, Behavior: tc.behavior,
				DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow, History: h, Now: now})
			if diff := cmp.Diff(tc.want, outcomeOf(got)); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
