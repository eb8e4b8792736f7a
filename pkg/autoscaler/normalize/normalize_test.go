package normalize

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var now = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)

func ago(d time.Duration) time.Time { return now.Add(-d) }

func dur(d time.Duration) *time.Duration { return &d }

// outcome is the part of Result the rule tables compare.
type outcome struct {
	Replicas, Stabilized int32
	StabilizeReason      string
	Limited              bool
	LimitReason          string
}

func outcomeOf(r Result) outcome {
	return outcome{Replicas: r.Replicas, Stabilized: r.Stabilized, StabilizeReason: r.StabilizeReason, Limited: r.Limited, LimitReason: r.LimitReason}
}

func recs(rs ...Recommendation) History { return History{Recommendations: rs} }

func TestNormalizeWithoutBehavior(t *testing.T) {
	tests := []struct {
		name                     string
		current, desired         int32
		minReplicas, maxReplicas int32
		history                  History
		want                     outcome
	}{{
		name:    "downscale stabilization applies the highest recommendation of the window",
		current: 5, desired: 2, minReplicas: 1, maxReplicas: 10,
		history: recs(Recommendation{Replicas: 4, Time: ago(6 * time.Minute)}, Recommendation{Replicas: 5, Time: ago(2 * time.Minute)}),
		want:    outcome{Replicas: 5, Stabilized: 5, StabilizeReason: ReasonScaleDownStabilized, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "recommendations older than the window no longer hold a scale-down",
		current: 5, desired: 2, minReplicas: 1, maxReplicas: 10,
		history: recs(Recommendation{Replicas: 5, Time: ago(6 * time.Minute)}, Recommendation{Replicas: 2, Time: ago(5 * time.Minute)}),
		want:    outcome{Replicas: 2, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "an empty history is seeded with current replicas, so a fresh autoscaler does not scale down at once",
		current: 5, desired: 2, minReplicas: 1, maxReplicas: 10,
		want: outcome{Replicas: 5, Stabilized: 5, StabilizeReason: ReasonScaleDownStabilized, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "scale-up limit is 4 when twice current is less",
		current: 1, desired: 10, minReplicas: 1, maxReplicas: 20,
		want: outcome{Replicas: 4, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "scale-up limit is twice current when more than 4",
		current: 3, desired: 10, minReplicas: 1, maxReplicas: 20,
		want: outcome{Replicas: 6, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "max below the scale-up limit clamps with TooManyReplicas",
		current: 3, desired: 10, minReplicas: 1, maxReplicas: 5,
		want: outcome{Replicas: 5, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonTooManyReplicas},
	}, {
		name:    "below min clamps with TooFewReplicas",
		current: 3, desired: 1, minReplicas: 2, maxReplicas: 5,
		history: recs(Recommendation{Replicas: 3, Time: ago(10 * time.Minute)}, Recommendation{Replicas: 1, Time: ago(9 * time.Minute)}),
		want:    outcome{Replicas: 2, Stabilized: 1, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonTooFewReplicas},
	}, {
		name:    "a desired count within range is not limited",
		current: 3, desired: 4, minReplicas: 1, maxReplicas: 5,
		want: outcome{Replicas: 4, Stabilized: 4, StabilizeReason: ReasonReadyForNewScale, LimitReason: ReasonDesiredWithinRange},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Normalize(Input{Current: tc.current, Desired: tc.desired, Min: tc.minReplicas, Max: tc.maxReplicas,
				DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow, History: tc.history, Now: now})
			if diff := cmp.Diff(tc.want, outcomeOf(got)); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeWithBehavior(t *testing.T) {
	pods := func(v int32, period time.Duration) Policy { return Policy{Type: PodsPolicy, Value: v, Period: period} }
	percent := func(v int32, period time.Duration) Policy {
		return Policy{Type: PercentPolicy, Value: v, Period: period}
	}
	noDownWindow := dur(0)
	tests := []struct {
		name             string
		current, desired int32
		minReplicas      int32
		behavior         Behavior
		history          History
		want             outcome
	}{{
		name:    "default scale-up: Max of 100% and 4 pods per 15s allows current+4 for small counts",
		current: 2, desired: 20, minReplicas: 1,
		want: outcome{Replicas: 6, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "default scale-up: Max of 100% and 4 pods per 15s allows doubling for large counts",
		current: 10, desired: 50, minReplicas: 1,
		want: outcome{Replicas: 20, Stabilized: 50, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "selectPolicy Min picks the policy with the smaller scale-up",
		current: 2, desired: 20, minReplicas: 1,
		behavior: Behavior{ScaleUp: &Rules{SelectPolicy: SelectMin}},
		want:     outcome{Replicas: 4, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "scale-ups recorded within the period count against the limit",
		current: 6, desired: 20, minReplicas: 1,
		history: History{ScaleUpEvents: []ScaleEvent{{Change: 4, Time: ago(10 * time.Second)}}},
		want:    outcome{Replicas: 6, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "scale-ups older than the period no longer count",
		current: 6, desired: 20, minReplicas: 1,
		history: History{ScaleUpEvents: []ScaleEvent{{Change: 4, Time: ago(20 * time.Second)}}},
		want:    outcome{Replicas: 12, Stabilized: 20, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "selectPolicy Disabled forbids scaling up",
		current: 3, desired: 10, minReplicas: 1,
		behavior: Behavior{ScaleUp: &Rules{SelectPolicy: SelectDisabled}},
		want:     outcome{Replicas: 3, Stabilized: 10, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleUpLimit},
	}, {
		name:    "max below the rate limit clamps with TooManyReplicas",
		current: 10, desired: 50, minReplicas: 1,
		behavior: Behavior{ScaleUp: &Rules{Policies: []Policy{pods(100, time.Minute)}}},
		want:     outcome{Replicas: 30, Stabilized: 50, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonTooManyReplicas},
	}, {
		name:    "scale-up stabilization applies the lowest recommendation of its window",
		current: 3, desired: 10, minReplicas: 1,
		behavior: Behavior{ScaleUp: &Rules{StabilizationWindow: dur(3 * time.Minute)}},
		history:  recs(Recommendation{Replicas: 4, Time: ago(time.Minute)}),
		want:     outcome{Replicas: 4, Stabilized: 4, StabilizeReason: ReasonScaleUpStabilized, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "default scale-down stabilization window is the flag's",
		current: 8, desired: 2, minReplicas: 1,
		history: recs(Recommendation{Replicas: 8, Time: ago(4 * time.Minute)}),
		want:    outcome{Replicas: 8, Stabilized: 8, StabilizeReason: ReasonScaleDownStabilized, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "scale-down stabilization yields the highest recommendation of its window, not current",
		current: 8, desired: 2, minReplicas: 1,
		history: recs(Recommendation{Replicas: 5, Time: ago(4 * time.Minute)}),
		want:    outcome{Replicas: 5, Stabilized: 5, StabilizeReason: ReasonScaleDownStabilized, LimitReason: ReasonDesiredWithinRange},
	}, {
		name:    "scale-down Pods policy removes at most its value per period",
		current: 8, desired: 2, minReplicas: 1,
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noDownWindow, Policies: []Policy{pods(1, time.Minute)}}},
		want:     outcome{Replicas: 7, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
	}, {
		name:    "scale-down Max picks the larger change of Percent 50 and Pods 1",
		current: 8, desired: 2, minReplicas: 1,
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noDownWindow, Policies: []Policy{percent(50, time.Minute), pods(1, time.Minute)}}},
		want:     outcome{Replicas: 4, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
	}, {
		name:    "scale-down Min picks the smaller change of Percent 50 and Pods 1",
		current: 8, desired: 2, minReplicas: 1,
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noDownWindow, SelectPolicy: SelectMin, Policies: []Policy{percent(50, time.Minute), pods(1, time.Minute)}}},
		want:     outcome{Replicas: 7, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
	}, {
		name:    "scale-downs recorded within the period count against the limit",
		current: 7, desired: 2, minReplicas: 1,
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noDownWindow, Policies: []Policy{pods(1, time.Minute)}}},
		history:  History{ScaleDownEvents: []ScaleEvent{{Change: 1, Time: ago(30 * time.Second)}}},
		want:     outcome{Replicas: 7, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
	}, {
		name:    "selectPolicy Disabled forbids scaling down",
		current: 8, desired: 2, minReplicas: 1,
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noDownWindow, SelectPolicy: SelectDisabled}},
		want:     outcome{Replicas: 8, Stabilized: 2, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonScaleDownLimit},
	}, {
		name:    "min above the rate limit clamps with TooFewReplicas",
		current: 3, desired: 1, minReplicas: 2,
		behavior: Behavior{ScaleDown: &Rules{StabilizationWindow: noDownWindow}},
		want:     outcome{Replicas: 2, Stabilized: 1, StabilizeReason: ReasonReadyForNewScale, Limited: true, LimitReason: ReasonTooFewReplicas},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			history := tc.history
			if len(history.Recommendations) == 0 {
				// An old entry keeps the history from being seeded with current replicas.
				history.Recommendations = []Recommendation{{Replicas: tc.current, Time: ago(time.Hour)}}
			}
			got := Normalize(Input{Current: tc.current, Desired: tc.desired, Min: tc.minReplicas, Max: 30, Behavior: &tc.behavior,
				DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow, History: history, Now: now})
			if diff := cmp.Diff(tc.want, outcomeOf(got)); diff != "" {
				t.Errorf("Normalize() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNormalizeHistory(t *testing.T) {
	tests := []struct {
		name     string
		behavior *Behavior
		history  History
		want     History
	}{{
		name: "without behavior: a new recommendation starts a run, drops runs older than the window and the events",
		history: History{
			Recommendations: []Recommendation{{Replicas: 9, Time: ago(6 * time.Minute)}, {Replicas: 4, Time: ago(15 * time.Second)}},
			ScaleUpEvents:   []ScaleEvent{{Change: 1, Time: ago(time.Second)}},
		},
		want: History{Recommendations: []Recommendation{{Replicas: 4, Time: ago(15 * time.Second)}, {Replicas: 3, Time: now, Since: now}}},
	}, {
		name: "the recommendation of the newest run continues it: last made now, started when it started",
		history: History{
			Recommendations: []Recommendation{{Replicas: 9, Time: ago(6 * time.Minute)}, {Replicas: 3, Time: ago(15 * time.Second), Since: ago(time.Hour)}},
		},
		want: History{Recommendations: []Recommendation{{Replicas: 9, Time: ago(6 * time.Minute)}, {Replicas: 3, Time: now, Since: ago(time.Hour)}}},
	}, {
		name:     "with behavior: keeps runs for the longer window; events stay until the next event of their direction",
		behavior: &Behavior{ScaleUp: &Rules{StabilizationWindow: dur(10 * time.Minute), Policies: []Policy{{Type: PodsPolicy, Value: 1, Period: time.Minute}}}},
		history: History{
			Recommendations: []Recommendation{{Replicas: 9, Time: ago(11 * time.Minute)}, {Replicas: 4, Time: ago(15 * time.Second)}},
			ScaleUpEvents:   []ScaleEvent{{Change: 1, Time: ago(2 * time.Minute)}, {Change: 2, Time: ago(30 * time.Second)}},
			ScaleDownEvents: []ScaleEvent{{Change: 1, Time: ago(20 * time.Second)}, {Change: 1, Time: ago(5 * time.Second)}},
		},
		want: History{
			Recommendations: []Recommendation{{Replicas: 4, Time: ago(15 * time.Second)}, {Replicas: 3, Time: now, Since: now}},
			ScaleUpEvents:   []ScaleEvent{{Change: 1, Time: ago(2 * time.Minute)}, {Change: 2, Time: ago(30 * time.Second)}},
			ScaleDownEvents: []ScaleEvent{{Change: 1, Time: ago(20 * time.Second)}, {Change: 1, Time: ago(5 * time.Second)}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := cloneHistory(tc.history)
			got := Normalize(Input{Current: 3, Desired: 3, Min: 1, Max: 10, Behavior: tc.behavior,
				DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow, History: tc.history, Now: now})
			if diff := cmp.Diff(tc.want, got.History, cmpEmpty); diff != "" {
				t.Errorf("Normalize().History mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.history); diff != "" {
				t.Errorf("Normalize() modified its input history (-before +after):\n%s", diff)
			}
		})
	}
}

func cloneHistory(h History) History {
	return History{
		Recommendations: append([]Recommendation(nil), h.Recommendations...),
		ScaleUpEvents:   append([]ScaleEvent(nil), h.ScaleUpEvents...),
		ScaleDownEvents: append([]ScaleEvent(nil), h.ScaleDownEvents...),
	}
}

func TestRecordScaleEvent(t *testing.T) {
	old := History{ScaleUpEvents: []ScaleEvent{{Change: 3, Time: ago(time.Minute)}}}
	tests := []struct {
		name       string
		behavior   *Behavior
		prev, next int32
		want       History
	}{{
		name: "without behavior no event is recorded", prev: 2, next: 4,
		want: old,
	}, {
		name: "a scale-up records its change and drops events older than the longest period", behavior: &Behavior{}, prev: 2, next: 4,
		want: History{ScaleUpEvents: []ScaleEvent{{Change: 2, Time: now}}},
	}, {
		name: "a scale-down records a positive change", behavior: &Behavior{}, prev: 4, next: 1,
		want: History{ScaleUpEvents: old.ScaleUpEvents, ScaleDownEvents: []ScaleEvent{{Change: 3, Time: now}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RecordScaleEvent(cloneHistory(old), tc.behavior, tc.prev, tc.next, now)
			if diff := cmp.Diff(tc.want, got, cmpEmpty); diff != "" {
				t.Errorf("RecordScaleEvent() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmpty = cmpopts.EquateEmpty()
