package state

import (
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// ObservedSinceCheckpoint returns h with the change between the target's replicas at the
// checkpoint (status.desiredReplicas when first seen) and now recorded as a scale event at now,
// the first time an active PodAutoscaler's target is resolved after it was seeded. A leader that
// died between its scale write and its status write left that change unrecorded; counting it now
// holds the policies at least as long as the real event would have (a change made by hand in
// that gap counts too, which only holds them longer). Several lost writes before the leader died
// show as their net change: exact for one lost write, or several in one direction. It also
// returns whether this was that first time.
//
// The target's replicas are also recorded as a recommendation at now, as upstream seeds every
// autoscaler it has not seen (after each restart): the recommendations the last term made after
// its last checkpoint are lost with it (a failed status write, or one not yet due), so the
// stabilization windows hold from the term's first round.
func ObservedSinceCheckpoint[C any](e Remembered[C], h normalize.History, b *normalize.Behavior, current int32, now time.Time) (normalize.History, bool) {
	if e.Checked {
		return h, false
	}
	h = normalize.RecordScaleEvent(h, b, e.CheckpointDesired, current, now)
	seed := normalize.History{Recommendations: []normalize.Recommendation{{Replicas: current, Time: now, Since: now}}}
	return normalize.Merge(h, seed, b), true
}

// Hold keeps rescales back until a time, per direction. A scale event counts both ways, as
// upstream's: a scale-up within a policy period lets a scale-down start from fewer replicas (and
// a scale-down lets a scale-up start from more). An event whose time or outcome is not known (a
// rescale that may have landed, a change a new leader found unrecorded, an event a new leader read
// from a checkpoint that may hold such) is recorded so that the policies of its own direction
// count it; those of the other direction wait until it leaves every period instead.
type Hold struct {
	Up, Down time.Time
}

// Holds reports whether h keeps a rescale from current to desired back at now.
func (h Hold) Holds(current, desired int32, now time.Time) bool {
	return (desired > current && now.Before(h.Up)) || (desired < current && now.Before(h.Down))
}

// After returns h extended by an event from prev to next at the given time, uncertain in the
// sense above: the other direction waits for the behavior's longest period from then.
func (h Hold) After(b *normalize.Behavior, prev, next int32, at time.Time) Hold {
	if b == nil || prev == next {
		return h
	}
	until := at.Add(normalize.LongestPeriod(b))
	if next > prev && until.After(h.Down) {
		h.Down = until
	}
	if next < prev && until.After(h.Up) {
		h.Up = until
	}
	return h
}

// SeededHold returns the hold of a term's first round: every event of the seeded history h (read
// from a checkpoint, which cannot tell an uncertain event from another), and the change from the
// checkpoint's desired replicas to current found at now.
func SeededHold(b *normalize.Behavior, h normalize.History, checkpoint, current int32, now time.Time) Hold {
	var held Hold
	for _, e := range h.ScaleUpEvents {
		held = held.After(b, 0, e.Change, e.Time)
	}
	for _, e := range h.ScaleDownEvents {
		held = held.After(b, e.Change, 0, e.Time)
	}
	return held.After(b, checkpoint, current, now)
}
