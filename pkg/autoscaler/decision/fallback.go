package decision

import (
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// Fallback is an External metric's fallback (spec.externalMetrics[].fallback, as KEP-5679's
// ExternalMetricFallback): once the metric has failed to be read continuously for After, it
// proposes Replicas, a proposal like any metric's, which normalization then stabilizes and limits.
type Fallback struct {
	// Replicas is what the metric proposes while the fallback applies.
	Replicas int32
	// After is how long the metric must have failed continuously before the fallback applies.
	After time.Duration
}

// FailingSince returns when m's current run of failed reads began, after this round at now: the
// start known from earlier rounds while m keeps failing, now at its first failure (or when the
// known start lies after now, as a clock moved back or another leader's clock ahead would make
// it: a start is never dated earlier than a round saw it), and zero once m is read.
func FailingSince(m Metric, now time.Time) time.Time {
	switch {
	case m.FetchErr == nil:
		return time.Time{}
	case m.FailingSince.IsZero() || m.FailingSince.After(now):
		return now
	}
	return m.FailingSince
}

// fallbackApplies reports whether a metric with fallback f, failing since since, proposes its
// fallback replicas at now: it has failed continuously for f.After.
func fallbackApplies(f *Fallback, since, now time.Time) bool {
	return f != nil && !since.IsZero() && now.Sub(since) >= f.After
}

// Proposes reports whether s takes part in the round's proposals: its metric was computed, or
// failed long enough for its fallback.
func (s MetricStatus) Proposes() bool { return s.Err == nil || s.FallbackActive }

// withFallback records m's fallback in s, the status of a metric m that could not be fetched, and,
// once it has failed for long enough, makes its proposal the fallback's replicas. s.Err stays set:
// the metric still failed, and its failure is still reported.
func withFallback(s MetricStatus, m Metric, now time.Time) MetricStatus {
	s.Fallback, s.FailingSince = m.Fallback, FailingSince(m, now)
	if fallbackApplies(m.Fallback, s.FailingSince, now) {
		s.FallbackActive = true
		s.Result = replicas.Result{Replicas: m.Fallback.Replicas}
		s.Description += " (fallback)"
	}
	return s
}

// FallbackState is where one metric's fallback stands after a round.
type FallbackState struct {
	// ID names the metric.
	ID MetricID
	// Fallback is the metric's fallback.
	Fallback Fallback
	// FailingSince is when the metric's current run of failed reads began; zero while it is read.
	FailingSince time.Time
	// Active is true once it has failed for Fallback.After: it then proposes Fallback.Replicas.
	Active bool
}

// Fallbacks returns where the fallback of each of metrics that has one stands at now, the same
// as Decide's statuses say, also on the rounds whose fast paths compute no status.
func Fallbacks(metrics []Metric, now time.Time) []FallbackState {
	var out []FallbackState
	for _, m := range metrics {
		if m.Fallback == nil {
			continue
		}
		since := FailingSince(m, now)
		out = append(out, FallbackState{ID: m.ID(), Fallback: *m.Fallback, FailingSince: since, Active: fallbackApplies(m.Fallback, since, now)})
	}
	return out
}
