package normalize

import (
	"slices"
	"time"
)

// Reasons and messages of the AbleToScale and ScalingLimited conditions, as upstream.
const (
	ReasonReadyForNewScale    = "ReadyForNewScale"
	ReasonScaleUpStabilized   = "ScaleUpStabilized"
	ReasonScaleDownStabilized = "ScaleDownStabilized"
	ReasonDesiredWithinRange  = "DesiredWithinRange"
	ReasonTooFewReplicas      = "TooFewReplicas"
	ReasonTooManyReplicas     = "TooManyReplicas"
	ReasonScaleUpLimit        = "ScaleUpLimit"
	ReasonScaleDownLimit      = "ScaleDownLimit"

	MessageReadyForNewScale    = "recommended size matches current size"
	MessageScaleUpStabilized   = "recent recommendations were lower than current one, applying the lowest recent recommendation"
	MessageScaleDownStabilized = "recent recommendations were higher than current one, applying the highest recent recommendation"
	MessageDesiredWithinRange  = "the desired count is within the acceptable range"
	MessageTooFewReplicas      = "the desired replica count is less than the minimum replica count"
	MessageTooManyReplicas     = "the desired replica count is more than the maximum replica count"
	MessageScaleUpLimit        = "the desired replica count is increasing faster than the maximum scale rate"
	MessageScaleDownLimit      = "the desired replica count is decreasing faster than the maximum scale rate"
)

// Input is one round's raw proposal and everything needed to normalize it.
type Input struct {
	// Current is the scale target's spec.replicas; it must lie within [Min, Max].
	Current int32
	// Desired is the raw proposal (the largest of the metrics' proposals).
	Desired int32
	// Min and Max bound the replicas.
	Min, Max int32
	// Behavior selects upstream's behavior-driven normalization; nil selects the legacy one
	// (downscale stabilization and a scale-up limit of max(2×current, 4)).
	Behavior *Behavior
	// DownscaleStabilizationWindow is the flag-configured downscale window (the default for Behavior too).
	DownscaleStabilizationWindow time.Duration
	// History is the state from previous rounds.
	History History
	// Now is the time of this round.
	Now time.Time
}

// Result is the normalized replica count with the reasons for the AbleToScale and ScalingLimited
// conditions and the updated history.
type Result struct {
	// Replicas is the replica count to apply.
	Replicas int32
	// Stabilized is the recommendation after stabilization, before limits.
	Stabilized int32
	// StabilizeReason and StabilizeMessage explain the AbleToScale condition (status True).
	StabilizeReason, StabilizeMessage string
	// Limited is the ScalingLimited status: true when limits changed the stabilized recommendation.
	Limited bool
	// LimitReason and LimitMessage explain the ScalingLimited condition.
	LimitReason, LimitMessage string
	// History is the input history with this round's recommendation recorded (see Record).
	History History
}

// SeedHistory records current replicas as the first recommendation of an empty history, as
// upstream's recordInitialRecommendation, so a fresh autoscaler does not scale down at once.
func SeedHistory(h History, current int32, now time.Time) History {
	if len(h.Recommendations) > 0 {
		return h
	}
	h.Recommendations = []Recommendation{{Replicas: current, Time: now, Since: now}}
	return h
}

// Normalize stabilizes and limits in.Desired, as upstream's normalizeDesiredReplicas (Behavior nil)
// or normalizeDesiredReplicasWithBehaviors.
func Normalize(in Input) Result {
	in.History = SeedHistory(in.History, in.Current, in.Now)
	if in.Behavior == nil {
		return normalizeLegacy(in)
	}
	return normalizeWithBehavior(in, *in.Behavior)
}

func normalizeLegacy(in Input) Result {
	res := Result{Stabilized: stabilizeDown(in.History.Recommendations, in.Desired, in.DownscaleStabilizationWindow, in.Now)}
	res.StabilizeReason, res.StabilizeMessage = ReasonReadyForNewScale, MessageReadyForNewScale
	if res.Stabilized != in.Desired {
		res.StabilizeReason, res.StabilizeMessage = ReasonScaleDownStabilized, MessageScaleDownStabilized
	}
	res.Replicas, res.LimitReason, res.LimitMessage = clampLegacy(in.Current, res.Stabilized, in.Min, in.Max)
	res.Limited = res.Replicas != res.Stabilized
	res.History = History{Recommendations: Record(in.History.Recommendations, in.Desired, in.DownscaleStabilizationWindow, in.Now),
		ForecastFloors: in.History.ForecastFloors}
	return res
}

func normalizeWithBehavior(in Input, b Behavior) Result {
	up, down := b.Resolve(in.DownscaleStabilizationWindow)
	var res Result
	res.Stabilized, res.StabilizeReason, res.StabilizeMessage = stabilizeWithBehavior(in, up.window(), down.window())
	if res.Stabilized == in.Desired {
		res.StabilizeReason, res.StabilizeMessage = ReasonReadyForNewScale, MessageReadyForNewScale
	}
	// The limits count the events of both directions within their periods; an event leaves the
	// history only when a newer one of its direction replaces it (see RecordScaleEvent), so that
	// aging alone never changes the history.
	res.Replicas, res.LimitReason, res.LimitMessage = limitWithBehavior(in, res.Stabilized, in.History, up, down)
	res.Limited = res.Replicas != res.Stabilized
	res.History = History{
		Recommendations: Record(in.History.Recommendations, in.Desired, max(up.window(), down.window()), in.Now),
		ScaleUpEvents:   in.History.ScaleUpEvents,
		ScaleDownEvents: in.History.ScaleDownEvents,
		ForecastFloors:  in.History.ForecastFloors,
	}
	return res
}

// stabilizeDown returns the highest recommendation within the window, including desired, as
// upstream's stabilizeRecommendation.
func stabilizeDown(recs []Recommendation, desired int32, window time.Duration, now time.Time) int32 {
	cutoff := now.Add(-window)
	highest := desired
	for _, r := range recs {
		if !r.Time.Before(cutoff) {
			highest = max(highest, r.Replicas)
		}
	}
	return highest
}

// stabilizeWithBehavior bounds the current replicas by the lowest recommendation of the scale-up
// window and the highest of the scale-down window, as upstream's stabilizeRecommendationWithBehaviors.
func stabilizeWithBehavior(in Input, upWindow, downWindow time.Duration) (int32, string, string) {
	upCutoff, downCutoff := in.Now.Add(-upWindow), in.Now.Add(-downWindow)
	upRecommendation, downRecommendation := in.Desired, in.Desired
	for _, r := range in.History.Recommendations {
		if r.Time.After(upCutoff) {
			upRecommendation = min(upRecommendation, r.Replicas)
		}
		if r.Time.After(downCutoff) {
			downRecommendation = max(downRecommendation, r.Replicas)
		}
	}
	recommendation := min(max(in.Current, upRecommendation), downRecommendation)
	if in.Desired >= in.Current {
		return recommendation, ReasonScaleUpStabilized, MessageScaleUpStabilized
	}
	return recommendation, ReasonScaleDownStabilized, MessageScaleDownStabilized
}

// Record returns recs with desired recommended at now, as runs of equal recommendations (see
// History). The same recommendation as the newest run continues it: the run is now last made at
// now. A different one drops the runs last made before now-keep and starts a new run at now.
func Record(recs []Recommendation, desired int32, keep time.Duration, now time.Time) []Recommendation {
	if n := len(recs); n > 0 && recs[n-1].Replicas == desired {
		out := slices.Clone(recs)
		out[n-1].Time = now
		return out
	}
	cutoff := now.Add(-keep)
	out := make([]Recommendation, 0, len(recs)+1)
	for _, r := range recs {
		if !r.Time.Before(cutoff) {
			out = append(out, r)
		}
	}
	return append(out, Recommendation{Replicas: desired, Time: now, Since: now})
}

// RecordScaleEvent returns h with a rescale from prev to next recorded at now, as upstream's
// storeScaleEvent: the event takes the place of the last event of its direction (in list order)
// that is older than that direction's longest policy period, or is appended when there is none.
// So an event is forgotten only when a newer one of its direction replaces it, and until then the
// other direction's policies still count it within their periods (see periodStart), exactly as
// upstream's in-memory lists. Without a Behavior no events are kept, since only behaviors read them.
func RecordScaleEvent(h History, b *Behavior, prev, next int32, now time.Time) History {
	if b == nil || prev == next {
		return h
	}
	up, down := b.Resolve(0)
	if next > prev {
		h.ScaleUpEvents = storeEvent(h.ScaleUpEvents, ScaleEvent{Change: next - prev, Time: now}, up.longestPeriod())
		return h
	}
	h.ScaleDownEvents = storeEvent(h.ScaleDownEvents, ScaleEvent{Change: prev - next, Time: now}, down.longestPeriod())
	return h
}

// storeEvent returns a new list with e in the place of the last event older than longest before
// e, or appended when no event is that old.
func storeEvent(events []ScaleEvent, e ScaleEvent, longest time.Duration) []ScaleEvent {
	cutoff := e.Time.Add(-longest)
	out := slices.Clone(events)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Time.Before(cutoff) {
			out[i] = e
			return out
		}
	}
	return append(out, e)
}
