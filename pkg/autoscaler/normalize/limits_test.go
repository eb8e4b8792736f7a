package normalize

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPolicyArithmeticSaturatesInsteadOfOverflowing checks issue 21's finding that a behavior
// policy of Pods 2147483647 (someone meaning "unlimited") overflowed start + value to a negative
// limit and froze scale-up at the current count; policy limits and period starts now saturate at
// the int32 bounds.
func TestPolicyArithmeticSaturatesInsteadOfOverflowing(t *testing.T) {
	noWindow := dur(0)
	rules := func(typ PolicyType, value int32) *Rules {
		return &Rules{StabilizationWindow: noWindow, Policies: []Policy{{Type: typ, Value: value, Period: time.Minute}}}
	}
	twice := func(change int32) []ScaleEvent {
		return []ScaleEvent{{Change: change, Time: ago(10 * time.Second)}, {Change: change, Time: ago(20 * time.Second)}}
	}
	tests := []struct {
		name             string
		current, desired int32
		behavior         Behavior
		history          History
		want             outcome
	}{{
		name:    "a scale-up policy of Pods 2147483647 allows the whole scale-up, not none (issue 21)",
		current: 3, desired: 20,
		behavior: Behavior{ScaleUp: rules(PodsPolicy, math.MaxInt32)},
		want:     outcome{Replicas: 20, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "a scale-up policy of Percent 2147483647 from 1000 replicas saturates instead of converting an out-of-range float",
		current: 1000, desired: 5000,
		behavior: Behavior{ScaleUp: rules(PercentPolicy, math.MaxInt32)},
		want:     outcome{Replicas: 5000, Stabilized: 5000, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "a scale-down policy of Pods 2147483647 allows the whole scale-down",
		current: 8, desired: 2,
		behavior: Behavior{ScaleDown: rules(PodsPolicy, math.MaxInt32)},
		want:     outcome{Replicas: 2, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "scale-ups in the period summing past int32 (a hand-edited status) do not wrap into room for more",
		current: 10, desired: 20,
		behavior: Behavior{ScaleUp: rules(PodsPolicy, 4)},
		history:  History{ScaleUpEvents: twice(math.MaxInt32)},
		want:     outcome{Replicas: 10, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "scale-downs in the period summing past int32 do not wrap into room for more",
		current: 10, desired: 2,
		behavior: Behavior{ScaleDown: rules(PodsPolicy, 1)},
		history:  History{ScaleDownEvents: twice(math.MaxInt32)},
		want:     outcome{Replicas: 10, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			history := tc.history
			history.Recommendations = []Recommendation{{Replicas: tc.current, Time: ago(time.Hour)}}
			got := Normalize(Input{Current: tc.current, Desired: tc.desired, Min: 1, Max: math.MaxInt32, Behavior: &tc.behavior,
				DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow, History: history, Now: now})
			if diff := cmp.Diff(tc.want, outcomeOf(got)); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSaturateTruncatesWithinInt32AndClampsBeyond(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want int32
	}{
		{2.9, 2}, {-2.9, -2}, {math.MaxInt32, math.MaxInt32}, {1e12, math.MaxInt32}, {-1e12, math.MinInt32}, {math.Inf(1), math.MaxInt32},
	} {
		if got := saturate(tc.in); got != tc.want {
			t.Errorf("saturate(%g) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
