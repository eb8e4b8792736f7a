package normalize

import (
	"slices"
	"time"
)

// HoldFloor returns the forecast's floor held by hysteresis, and the floors to remember for the
// next round. raw is the floor the forecast asks for this round (0 without one). The held floor
// is the highest floor asked for within window before now, raw included: it rises at once and
// falls only when every round of the window asked for less, so a forecast whose floor wavers by
// a replica from round to round holds the top of its wavering instead of following it down and
// up again. It is never below raw. A round without a forecast (raw 0) forgets the floors.
//
// floors is kept as a staircase: floors strictly decreasing, each dated the last round that asked
// for it (or more), oldest first; a floor that a later, higher or equal one covers is dropped. So
// it holds at most one entry per replica count, and its first entry is the window's highest.
func HoldFloor(floors []Recommendation, raw int32, window time.Duration, now time.Time) (int32, []Recommendation) {
	if raw <= 0 {
		return 0, nil
	}
	cutoff := now.Add(-window)
	out := make([]Recommendation, 0, len(floors)+1)
	for _, f := range floors {
		if !f.Time.Before(cutoff) && f.Replicas > raw {
			out = append(out, f)
		}
	}
	out = append(out, Recommendation{Replicas: raw, Time: now})
	return out[0].Replicas, out
}

// mergeFloors returns the staircase (see HoldFloor) of the floors either x or y remembers: the
// union, each floor dropped only where a later one at least as high covers it.
func mergeFloors(x, y []Recommendation) []Recommendation {
	if len(x) == 0 && len(y) == 0 {
		return nil
	}
	all := append(slices.Clone(x), y...)
	slices.SortStableFunc(all, func(a, b Recommendation) int { return a.Time.Compare(b.Time) })
	var out []Recommendation
	for _, f := range all {
		for len(out) > 0 && out[len(out)-1].Replicas <= f.Replicas {
			out = out[:len(out)-1]
		}
		out = append(out, f)
	}
	return out
}
