package decision

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// TestExternalMetricFallback checks KEP-5679's rules: an External metric that has failed
// continuously for its failureDurationSeconds proposes its fallback replicas, a proposal like any
// other (the largest wins, then stabilization, policies and min/max), and a read ends it.
func TestExternalMetricFallback(t *testing.T) {
	queueTarget := replicas.Target{Type: replicas.Value, Value: 10_000}
	after := 180 * time.Second
	failing := func(fallback int32, since time.Time) Metric {
		m := Metric{Kind: ExternalMetric, Name: "queue_depth", Target: queueTarget, FetchErr: errFetch, FailingSince: since}
		if fallback > 0 {
			m.Fallback = &Fallback{Replicas: fallback, After: after}
		}
		return m
	}
	type outcome struct {
		Desired, Proposed int32
		Rescale, Active   bool
		Since             time.Time
		Limited           bool
	}
	tests := []struct {
		name    string
		current int32
		metrics []Metric
		want    outcome
	}{{
		name:    "a failing metric without a fallback holds the replicas",
		current: 2, metrics: []Metric{failing(0, now.Add(-time.Hour))},
		want: outcome{Desired: 2, Since: now.Add(-time.Hour)},
	}, {
		name:    "a first failure starts the count at this round and proposes nothing",
		current: 2, metrics: []Metric{failing(5, time.Time{})},
		want: outcome{Desired: 2, Since: now},
	}, {
		name:    "a metric failing for less than failureDurationSeconds proposes nothing",
		current: 2, metrics: []Metric{failing(5, now.Add(-after+time.Second))},
		want: outcome{Desired: 2, Since: now.Add(-after + time.Second)},
	}, {
		name:    "a metric failing for failureDurationSeconds proposes the fallback replicas",
		current: 2, metrics: []Metric{failing(5, now.Add(-after))},
		want: outcome{Desired: 5, Proposed: 5, Rescale: true, Active: true, Since: now.Add(-after)},
	}, {
		name:    "the fallback's proposal is limited by the scale-up policies (+4 pods per 15 s from 2)",
		current: 2, metrics: []Metric{failing(10, now.Add(-time.Hour))},
		want: outcome{Desired: 6, Proposed: 10, Rescale: true, Active: true, Since: now.Add(-time.Hour), Limited: true},
	}, {
		name:    "the fallback's proposal is capped by maxReplicas",
		current: 8, metrics: []Metric{failing(50, now.Add(-time.Hour))},
		want: outcome{Desired: 10, Proposed: 50, Rescale: true, Active: true, Since: now.Add(-time.Hour), Limited: true},
	}, {
		name:    "the fallback's proposal of fewer replicas waits out the scale-down stabilization window",
		current: 8, metrics: []Metric{failing(2, now.Add(-time.Hour))},
		want: outcome{Desired: 8, Proposed: 2, Active: true, Since: now.Add(-time.Hour)},
	}, {
		name:    "a healthy metric above the fallback wins: the largest proposal wins",
		current: 4, metrics: []Metric{failing(5, now.Add(-time.Hour)),
			{Kind: ExternalMetric, Name: "lag", Target: queueTarget, Values: []int64{20_000}}},
		want: outcome{Desired: 8, Proposed: 8, Rescale: true, Active: true, Since: now.Add(-time.Hour)},
	}, {
		name:    "the fallback scales up beside another metric failing without one",
		current: 2, metrics: []Metric{failing(5, now.Add(-time.Hour)), failing(0, time.Time{})},
		want: outcome{Desired: 5, Proposed: 5, Rescale: true, Active: true, Since: now.Add(-time.Hour)},
	}, {
		name:    "a read ends the fallback and clears the failure start",
		current: 2, metrics: []Metric{{Kind: ExternalMetric, Name: "queue_depth", Target: queueTarget, Values: []int64{10_000},
			Fallback: &Fallback{Replicas: 9, After: after}, FailingSince: now.Add(-time.Hour)}},
		want: outcome{Desired: 2, Proposed: 2},
	}, {
		name:    "a known start after now (a clock behind the last leader's) counts from now, never earlier",
		current: 2, metrics: []Metric{failing(5, now.Add(time.Hour))},
		want: outcome{Desired: 2, Since: now},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(Input{SpecReplicas: tc.current, StatusReplicas: tc.current, MinReplicas: 1, MaxReplicas: 10,
				Pods: seedPods(int(tc.current)), Metrics: tc.metrics, Behavior: &normalize.Behavior{}, Config: DefaultConfig(), Now: now})
			s := d.Statuses[0]
			got := outcome{Desired: d.DesiredReplicas, Proposed: d.Explanation.Proposed, Rescale: d.Rescale,
				Active: s.FallbackActive, Since: s.FailingSince}
			for _, c := range d.Conditions {
				if c.Type == ScalingLimited {
					got.Limited = c.Status
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailingSince checks how a round moves a metric's failure start: kept while it fails, set at
// the first failure, cleared by a read.
func TestFailingSince(t *testing.T) {
	earlier := now.Add(-time.Minute)
	tests := []struct {
		name string
		m    Metric
		want time.Time
	}{
		{"a failure keeps the known start", Metric{FetchErr: errFetch, FailingSince: earlier}, earlier},
		{"a first failure starts now", Metric{FetchErr: errFetch}, now},
		{"a read clears the start", Metric{FailingSince: earlier}, time.Time{}},
		{"a start after now is moved to now", Metric{FetchErr: errFetch, FailingSince: now.Add(time.Second)}, now},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FailingSince(tc.m, now); !got.Equal(tc.want) {
				t.Errorf("FailingSince = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestFallbacksAgreeWithTheStatuses checks that Fallbacks, which the controller reads on every
// round, says what Decide's statuses say, and lists only the metrics with a fallback.
func TestFallbacksAgreeWithTheStatuses(t *testing.T) {
	f := &Fallback{Replicas: 4, After: time.Minute}
	metrics := []Metric{
		{Kind: ExternalMetric, Name: "a", Target: replicas.Target{Type: replicas.Value, Value: 1000}, FetchErr: errFetch, Fallback: f, FailingSince: now.Add(-time.Hour)},
		{Kind: ExternalMetric, Name: "b", Target: replicas.Target{Type: replicas.Value, Value: 1000}, FetchErr: errFetch},
		{Kind: ExternalMetric, Name: "c", Target: replicas.Target{Type: replicas.Value, Value: 1000}, FetchErr: errFetch, Fallback: f},
	}
	d := Decide(Input{SpecReplicas: 2, StatusReplicas: 2, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(2), Metrics: metrics, Config: DefaultConfig(), Now: now})
	var fromStatuses []FallbackState
	for _, s := range d.Statuses {
		if s.Fallback != nil {
			fromStatuses = append(fromStatuses, FallbackState{ID: s.ID(), Fallback: *s.Fallback, FailingSince: s.FailingSince, Active: s.FallbackActive})
		}
	}
	if diff := cmp.Diff(fromStatuses, Fallbacks(metrics, now)); diff != "" {
		t.Errorf("Fallbacks (-statuses +Fallbacks):\n%s", diff)
	}
}
