package telemetry

import (
	"testing"
	"time"
)

func TestRoundsAreBusyPeriodsMeasuredAgainstTheSyncPeriod(t *testing.T) {
	at := func(s float64) time.Time { return now.Add(time.Duration(s * float64(time.Second))) }
	type step struct {
		start  bool
		at     float64
		queued int
		// want is the duration (done) or lateness (start) reported, -1 for none.
		want float64
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "the first round reports no lateness, and ends when the last sync ends with nothing queued", steps: []step{
			{start: true, at: 0, queued: 1, want: -1}, {start: true, at: 0.1, want: -1},
			{at: 0.2, want: -1}, {at: 0.5, want: 0.5},
		}},
		{name: "a round starting 3 s after the previous round's start plus a 15 s period is 3 s late", steps: []step{
			{start: true, at: 0, want: -1}, {at: 1, want: 1},
			{start: true, at: 18, want: 3}, {at: 18.5, want: 0.5},
		}},
		{name: "an early round (a spec change) is not late", steps: []step{
			{start: true, at: 0, want: -1}, {at: 1, want: 1},
			{start: true, at: 5, want: 0}, {at: 6, want: 1},
		}},
		{name: "a sync ending with work still queued does not end the round", steps: []step{
			{start: true, at: 0, want: -1}, {at: 1, queued: 2, want: -1},
			{start: true, at: 1, want: -1}, {at: 2, want: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rounds{period: 15 * time.Second}
			for i, s := range tt.steps {
				var d time.Duration
				var ok bool
				if s.start {
					d, ok = r.started(at(s.at))
				} else {
					d, ok = r.done(at(s.at), s.queued)
				}
				got := -1.0
				if ok {
					got = d.Seconds()
				}
				if got != s.want {
					t.Errorf("step %d: got %g, want %g", i, got, s.want)
				}
			}
		})
	}
}
