package normalize

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rescale is one applied change of the replica count, some time before now.
type rescale struct {
	ago time.Duration
	to  int32
}

func podsPolicy(value int32, period time.Duration) Policy {
	return Policy{Type: PodsPolicy, Value: value, Period: period}
}

func percentPolicy(value int32, period time.Duration) Policy {
	return Policy{Type: PercentPolicy, Value: value, Period: period}
}

// TestPoliciesSeeScaleEventsOfBothDirections records rescales with RecordScaleEvent, as the
// controller does after each successful one, and then limits one more proposal. The expected
// values are upstream's: calculateScaleUpLimitWithScalingRules and
// calculateScaleDownLimitWithBehaviors start every policy's period at
// current - (scale-ups within the period) + (scale-downs within the period), over the events that
// storeScaleEvent kept (a new event replaces the last one of its direction that is older than that
// direction's longest policy period).
func TestPoliciesSeeScaleEventsOfBothDirections(t *testing.T) {
	noWindow := dur(0)
	tests := []struct {
		name     string
		behavior Behavior
		start    int32
		rescales []rescale
		desired  int32
		want     outcome
		wantUp   []ScaleEvent
		wantDown []ScaleEvent
	}{{
		// Down events 60 s ago: 8 → 4. Scale-up period 300 s: start = 4 - 0 + 4 = 8; Percent 100 → ceil(8 × 2) = 16.
		name:     "a scale-down within a scale-up Percent policy's period raises the period's start",
		behavior: Behavior{ScaleUp: &Rules{Policies: []Policy{percentPolicy(100, 300*time.Second)}}, ScaleDown: &Rules{StabilizationWindow: noWindow}},
		start:    8, rescales: []rescale{{60 * time.Second, 4}},
		desired: 30,
		want:    outcome{Replicas: 16, Stabilized: 30, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		// 10 → 8 (280 s ago), → 6 (250 s ago: the first is 30 s old, within the 60 s scale-down
		// period, so appended), → 4 (100 s ago: both are older than 60 s; upstream replaces the last
		// of them, the 250 s one, and keeps the 280 s one). Scale-up period 300 s:
		// start = 4 - 0 + (2 + 2) = 8; Percent 100 → 16. Pruning every old scale-down gave 4 + 2 = 6 → 12;
		// keeping all three would give 4 + 6 = 10 → 20.
		name: "a scale-down older than its own direction's period still counts for a longer scale-up period until replaced",
		behavior: Behavior{ScaleUp: &Rules{Policies: []Policy{percentPolicy(100, 300*time.Second)}},
			ScaleDown: &Rules{StabilizationWindow: noWindow, Policies: []Policy{podsPolicy(2, 60*time.Second)}}},
		start: 10, rescales: []rescale{{280 * time.Second, 8}, {250 * time.Second, 6}, {100 * time.Second, 4}},
		desired:  30,
		want:     outcome{Replicas: 16, Stabilized: 30, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
		wantDown: []ScaleEvent{{Change: 2, Time: ago(280 * time.Second)}, {Change: 2, Time: ago(100 * time.Second)}},
	}, {
		// 4 → 6 (110 s ago), → 8 (105 s ago: appended, 5 s < 15 s), → 10 (60 s ago: both older than
		// the 15 s scale-up period; the 105 s one is replaced). Scale-down Pods 4 per 120 s:
		// start = 10 - (2 + 2) + 0 = 6 → 6 - 4 = 2, above min 1.
		name: "scale-ups within a scale-down Pods policy's period lower the period's start",
		behavior: Behavior{ScaleUp: &Rules{Policies: []Policy{podsPolicy(4, 15*time.Second)}},
			ScaleDown: &Rules{StabilizationWindow: noWindow, Policies: []Policy{podsPolicy(4, 120*time.Second)}}},
		start: 4, rescales: []rescale{{110 * time.Second, 6}, {105 * time.Second, 8}, {60 * time.Second, 10}},
		desired: 1,
		want:    outcome{Replicas: 2, Stabilized: 1, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
		wantUp:  []ScaleEvent{{Change: 2, Time: ago(110 * time.Second)}, {Change: 2, Time: ago(60 * time.Second)}},
	}, {
		// 4 → 8 (50 s ago), → 12 (30 s ago: the 50 s one is 20 s older than the default 15 s
		// scale-up period and is replaced). Scale-down Percent 50 per 60 s: start = 12 - 4 = 8 →
		// int32(8 × 0.5) = 4. Keeping the replaced event would give 12 - 8 = 4 → 2.
		name:     "an event replaced by a newer one of its direction no longer counts for the other direction",
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noWindow, Policies: []Policy{percentPolicy(50, 60*time.Second)}}},
		start:    4, rescales: []rescale{{50 * time.Second, 8}, {30 * time.Second, 12}},
		desired: 1,
		want:    outcome{Replicas: 4, Stabilized: 1, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
		wantUp:  []ScaleEvent{{Change: 4, Time: ago(30 * time.Second)}},
	}, {
		// 2 → 5 (100 s ago), 5 → 3 (50 s ago). Scale-up Pods 3 per 120 s: start = 3 - 3 + 2 = 2 → 5.
		name: "a scale-up Pods policy counts the scale-ups and the scale-downs of its period",
		behavior: Behavior{ScaleUp: &Rules{Policies: []Policy{podsPolicy(3, 120*time.Second)}},
			ScaleDown: &Rules{StabilizationWindow: noWindow, Policies: []Policy{podsPolicy(2, 15*time.Second)}}},
		start: 2, rescales: []rescale{{100 * time.Second, 5}, {50 * time.Second, 3}},
		desired: 10,
		want:    outcome{Replicas: 5, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		// 6 → 12 (200 s ago), 12 → 9 (100 s ago), current 9. Scale-up Min of Percent 50 per 60 s
		// (start 9 → ceil(13.5) = 14) and Pods 2 per 300 s (start 9 - 6 + 3 = 6 → 8): Min → 8,
		// below current, so no scale-up at all (the limit is raised to current 9).
		name: "a Min scale-up policy over a long period can hold the replicas after a recent drop",
		behavior: Behavior{ScaleUp: &Rules{SelectPolicy: SelectMin, Policies: []Policy{percentPolicy(50, 60*time.Second), podsPolicy(2, 300*time.Second)}},
			ScaleDown: &Rules{StabilizationWindow: noWindow}},
		start: 6, rescales: []rescale{{200 * time.Second, 12}, {100 * time.Second, 9}},
		desired: 20,
		want:    outcome{Replicas: 9, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var h History
			current := tc.start
			for _, r := range tc.rescales {
				h = RecordScaleEvent(h, &tc.behavior, current, r.to, ago(r.ago))
				current = r.to
			}
			h.Recommendations = []Recommendation{{Replicas: current, Time: ago(time.Hour)}}
			got := Normalize(Input{Current: current, Desired: tc.desired, Min: 1, Max: 30, Behavior: &tc.behavior,
				DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow, History: h, Now: now})
			if diff := cmp.Diff(tc.want, outcomeOf(got)); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
			if tc.wantUp != nil {
				if diff := cmp.Diff(tc.wantUp, h.ScaleUpEvents); diff != "" {
					t.Errorf("scale-up events kept (-want +got):\n%s", diff)
				}
			}
			if tc.wantDown != nil {
				if diff := cmp.Diff(tc.wantDown, h.ScaleDownEvents); diff != "" {
					t.Errorf("scale-down events kept (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRecordScaleEventReplacesAsUpstream(t *testing.T) {
	b := &Behavior{ScaleUp: &Rules{Policies: []Policy{podsPolicy(4, time.Minute)}}}
	old := []ScaleEvent{{Change: 1, Time: ago(5 * time.Minute)}, {Change: 2, Time: ago(3 * time.Minute)}, {Change: 3, Time: ago(30 * time.Second)}}
	got := RecordScaleEvent(History{ScaleUpEvents: old}, b, 2, 6, now)
	want := []ScaleEvent{{Change: 1, Time: ago(5 * time.Minute)}, {Change: 4, Time: now}, {Change: 3, Time: ago(30 * time.Second)}}
	if diff := cmp.Diff(want, got.ScaleUpEvents); diff != "" {
		t.Errorf("the new event takes the place of the last event older than the longest period (-want +got):\n%s", diff)
	}
	if old[1].Change != 2 {
		t.Errorf("RecordScaleEvent modified its input list: %v", old)
	}
	got = RecordScaleEvent(History{ScaleUpEvents: old[2:]}, b, 2, 6, now)
	want = []ScaleEvent{{Change: 3, Time: ago(30 * time.Second)}, {Change: 4, Time: now}}
	if diff := cmp.Diff(want, got.ScaleUpEvents); diff != "" {
		t.Errorf("with no event older than the longest period the new one is appended (-want +got):\n%s", diff)
	}
}
