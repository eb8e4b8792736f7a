package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// dailyRamp is a daily load in queries/s: low, rising linearly over rise
// from the time of day of from to high, held for hold, then low again.
func dailyRamp(from time.Time, rise, hold time.Duration, low, high float64) func(time.Time) float64 {
	return func(t time.Time) float64 {
		since := (t.Sub(from)%(24*time.Hour) + 24*time.Hour) % (24 * time.Hour)
		switch {
		case since < rise:
			return low + (high-low)*since.Seconds()/rise.Seconds()
		case since < rise+hold:
			return high
		}
		return low
	}
}

// dailyRamps is the daily load of several ramps (dailyRamp), at its highest
// where they overlap.
func dailyRamps(starts []time.Time, rise, hold time.Duration, low, high float64) func(time.Time) float64 {
	ramps := make([]func(time.Time) float64, len(starts))
	for i, s := range starts {
		ramps[i] = dailyRamp(s, rise, hold, low, high)
	}
	return func(t time.Time) float64 {
		v := low
		for _, r := range ramps {
			v = max(v, r(t))
		}
		return v
	}
}

// counterHistory is OpenMetrics text (for `promtool tsdb create-blocks-from
// openmetrics`) of a counter series that counts load (per second) every
// step from start to end: what Prometheus would have scraped from a pod
// that served that load.
func counterHistory(series string, labels map[string]string, start, end time.Time, step time.Duration, load func(time.Time) float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# TYPE %s counter\n", strings.TrimSuffix(series, "_total"))
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	pairs := make([]string, len(keys))
	for i, k := range keys {
		pairs[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	sel := series + "{" + strings.Join(pairs, ",") + "}"
	var total float64
	for at := start; !at.After(end); at = at.Add(step) {
		fmt.Fprintf(&b, "%s %g %d\n", sel, total, at.Unix())
		total += load(at) * step.Seconds()
	}
	b.WriteString("# EOF\n")
	return b.String()
}

// readyAhead is how long before at the ready endpoints of a look first
// reached want (negative: after at), and whether they ever did.
func readyAhead(samples []sample, start time.Time, at time.Time, want int) (time.Duration, bool) {
	for _, s := range samples {
		if s.Ready >= want {
			return at.Sub(start.Add(s.At)), true
		}
	}
	return 0, false
}
