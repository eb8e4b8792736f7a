package main

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/podpilot/podpilot/bench/internal/stats"
)

// sample is one look at a scaled Deployment after a load step.
type sample struct {
	// At is the time since the step.
	At time.Duration
	// Metric is the value the autoscaler's metric source served (NaN: not
	// read in this look).
	Metric float64
	// Replicas is the scale subresource's spec.replicas.
	Replicas int32
	// Ready is the number of ready endpoints of the Deployment's Service.
	Ready int
}

// reaction is when one autoscaler's reaction to a step went through each
// stage, as times since the step, and its split into the three stages.
type reaction struct {
	Before, After int32
	// Metric: the metric source first served a value above the threshold
	// (the value at which a scale-up is due).
	Metric time.Duration
	// Scaled: the scale subresource's replicas first reached their final value.
	Scaled time.Duration
	// Ready: the ready endpoints first reached the final replicas (the last
	// new pod Ready and in the Service's endpoints): the total.
	Ready time.Duration
}

// Lag is step → the first sample reflecting it in the metric API.
func (r reaction) Lag() time.Duration { return r.Metric }

// Decision is that sample → the replicas changed to their final value.
func (r reaction) Decision() time.Duration { return r.Scaled - r.Metric }

// Startup is the replicas changed → the last new pod Ready in the endpoints.
func (r reaction) Startup() time.Duration { return r.Ready - r.Scaled }

// errNoScaleUp is reaction's answer when the replicas never rose above before.
var errNoScaleUp = errors.New("no scale-up after the step")

// reactionOf reads a reaction from the looks taken after a step, in order:
// the final replicas are the last look's; each stage is the first look that
// reached it. A metric already above threshold at the step counts as lag 0;
// a look before the first metric read has NaN and never counts.
func reactionOf(samples []sample, threshold float64, before int32) (reaction, error) {
	if len(samples) == 0 {
		return reaction{}, errNoScaleUp
	}
	final := samples[len(samples)-1].Replicas
	r := reaction{Before: before, After: final, Metric: -1, Scaled: -1, Ready: -1}
	if final <= before {
		return r, fmt.Errorf("%w: %d replicas before, %d at the end", errNoScaleUp, before, final)
	}
	for _, s := range samples {
		if r.Metric < 0 && !math.IsNaN(s.Metric) && s.Metric > threshold {
			r.Metric = s.At
		}
		if r.Scaled < 0 && s.Replicas >= final {
			r.Scaled = s.At
		}
		if r.Ready < 0 && s.Ready >= int(final) {
			r.Ready = s.At
		}
	}
	switch {
	case r.Ready < 0:
		return r, fmt.Errorf("%d ready endpoints of %d replicas at the end", samples[len(samples)-1].Ready, final)
	case r.Metric < 0:
		return r, fmt.Errorf("the metric source never served a value above %g", threshold)
	}
	return r, nil
}

// phaseOffset is where step i starts in the sync period: i·sync/5, so that
// five steps spread over the phase of an autoscaler created a whole number of
// sync periods before.
func phaseOffset(i int, sync time.Duration) time.Duration {
	return time.Duration(i%5) * sync / 5
}

// stageSummary is the median and worst of one stage over the steps.
type stageSummary struct{ Median, Worst time.Duration }

// summarize returns the median and the worst of each stage of rs, in the
// order total, lag, decision, start-up. The medians are each stage's own:
// they need not add up to the total's.
func summarize(rs []reaction) [4]stageSummary {
	var out [4]stageSummary
	for i, f := range []func(reaction) time.Duration{
		func(r reaction) time.Duration { return r.Ready }, reaction.Lag, reaction.Decision, reaction.Startup,
	} {
		vs := make([]float64, len(rs))
		for j, r := range rs {
			vs[j] = f(r).Seconds()
		}
		s := stats.Summarize(vs)
		out[i] = stageSummary{Median: seconds(s.P50), Worst: seconds(s.Max)}
	}
	return out
}

func seconds(v float64) time.Duration {
	if math.IsNaN(v) {
		return -1
	}
	return time.Duration(v * float64(time.Second))
}

// secs formats a duration in seconds with one decimal; negative is n/a.
func secs(d time.Duration) string {
	if d < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// ratio formats a/b as "0.62×"; n/a without both.
func ratio(a, b time.Duration) string {
	if a < 0 || b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", a.Seconds()/b.Seconds())
}
