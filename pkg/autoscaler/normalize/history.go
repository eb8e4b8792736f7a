package normalize

import (
	"cmp"
	"slices"
	"time"
)

// Checkpoint returns recs as they are written down between rounds: every run dated when it was
// last made, except the newest, dated when it started, so that a checkpoint changes only when
// the recommendation does (not at every round that continues a run). FromCheckpoint reads it
// back.
func Checkpoint(recs []Recommendation) []Recommendation {
	out := slices.Clone(recs)
	if n := len(out); n > 0 && !out[n-1].Since.IsZero() {
		out[n-1].Time = out[n-1].Since
	}
	return out
}

// FromCheckpoint reads back a Checkpoint whose newest run was still being made: it counts as
// made until lastRound (the last round before the reader's own, e.g. one sync period ago), but
// never before it started. A checkpoint is read when a controller first sees an autoscaler or
// takes over from another; the newest run may have ended since, so this holds it as long as it
// could have been made, never shorter.
func FromCheckpoint(runs []Recommendation, lastRound time.Time) []Recommendation {
	out := slices.Clone(runs)
	if n := len(out); n > 0 {
		out[n-1].Since = out[n-1].Time
		if lastRound.After(out[n-1].Time) {
			out[n-1].Time = lastRound
		}
	}
	return out
}

// Fold returns recs with at most limit entries (limit at least 3): when there are more, the
// oldest runs are folded into two, their highest and their lowest recommendation, both dated
// the last time any of them was made. Each stabilization window (the highest of the scale-down
// window, the lowest of the scale-up window) then holds a folded run at least as long as the
// runs it replaces, never shorter; the newest runs are kept as they are.
func Fold(recs []Recommendation, limit int) []Recommendation {
	if limit < 3 || len(recs) <= limit {
		return recs
	}
	folded := recs[:len(recs)-limit+2]
	last := folded[len(folded)-1].Time
	hi, lo := folded[0].Replicas, folded[0].Replicas
	for _, r := range folded {
		hi, lo = max(hi, r.Replicas), min(lo, r.Replicas)
		if r.Time.After(last) {
			last = r.Time
		}
	}
	out := make([]Recommendation, 0, limit)
	out = append(out, Recommendation{Replicas: hi, Time: last})
	if lo != hi {
		out = append(out, Recommendation{Replicas: lo, Time: last})
	}
	return append(out, recs[len(folded):]...)
}

// Merge returns the union of two histories of one autoscaler, e.g. the controller's and one
// written by another (an earlier leader's late write): every run and every scale event either
// knows is kept, so a merge never loses what one side recorded. Runs are ordered by when they
// were last made, and two adjacent runs of one recommendation become one, last made at the later
// time. Events that are the same event in both (same change, times within the second a
// checkpoint rounds them to) count once, at the earlier time; the union is then stored in time
// order as RecordScaleEvent stores events, so a merged history holds what one that saw every
// event would; the forecast floors either remembers are kept as one staircase (see HoldFloor).
// b (nil without behavior) gives the longest policy periods.
func Merge(x, y History, b *Behavior) History {
	out := History{Recommendations: mergeRuns(x.Recommendations, y.Recommendations)}
	up, down := DefaultScaleUpRules(), DefaultScaleDownRules(0)
	if b != nil {
		up, down = b.Resolve(0)
	}
	out.ScaleUpEvents = mergeEvents(x.ScaleUpEvents, y.ScaleUpEvents, up.longestPeriod())
	out.ScaleDownEvents = mergeEvents(x.ScaleDownEvents, y.ScaleDownEvents, down.longestPeriod())
	out.ForecastFloors = mergeFloors(x.ForecastFloors, y.ForecastFloors)
	return out
}

func mergeRuns(x, y []Recommendation) []Recommendation {
	all := append(slices.Clone(x), y...)
	slices.SortStableFunc(all, func(a, b Recommendation) int { return a.Time.Compare(b.Time) })
	var out []Recommendation
	for _, r := range all {
		if n := len(out); n > 0 && out[n-1].Replicas == r.Replicas {
			out[n-1].Time = r.Time
			if !r.Since.IsZero() && (out[n-1].Since.IsZero() || r.Since.Before(out[n-1].Since)) {
				out[n-1].Since = r.Since
			}
			continue
		}
		out = append(out, r)
	}
	return out
}

func mergeEvents(x, y []ScaleEvent, longest time.Duration) []ScaleEvent {
	all := append(slices.Clone(x), y...)
	slices.SortStableFunc(all, func(a, b ScaleEvent) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Change, b.Change))
	})
	var out []ScaleEvent
	for i, e := range all {
		if seenWithinASecond(all[:i], e) {
			continue
		}
		out = storeEvent(out, e, longest)
	}
	return out
}

// seenWithinASecond reports whether one of before, sorted by time, is the same event as e.
func seenWithinASecond(before []ScaleEvent, e ScaleEvent) bool {
	for j := len(before) - 1; j >= 0 && !before[j].Time.Before(e.Time.Add(-time.Second)); j-- {
		if sameEvent(before[j], e) {
			return true
		}
	}
	return false
}

// sameEvent reports whether two events are one, written down at different precisions: the same
// change at times within a second, the later no later than the earlier rounded up.
func sameEvent(a, b ScaleEvent) bool {
	if a.Change != b.Change {
		return false
	}
	early, late := a.Time, b.Time
	if late.Before(early) {
		early, late = late, early
	}
	return !late.After(CeilSecond(early))
}

// CeilSecond rounds t up to a whole second, as a checkpoint with whole seconds writes the time
// of a scale event or of an ended run: a window or a period then ends a little later, never
// earlier.
func CeilSecond(t time.Time) time.Time {
	if s := t.Truncate(time.Second); !s.Equal(t) {
		return s.Add(time.Second)
	}
	return t
}
