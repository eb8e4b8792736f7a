package normalize

import (
	"math"
	"time"
)

// Legacy scale-up limit: max(scaleUpLimitFactor × current, scaleUpLimitMinimum).
const (
	scaleUpLimitFactor  = 2
	scaleUpLimitMinimum = 4
)

// clampLegacy clamps desired to [min, max(2×current, 4) ∧ max], as upstream's
// convertDesiredReplicasWithRules.
func clampLegacy(current, desired, minReplicas, maxReplicas int32) (int32, string, string) {
	scaleUpLimit := max(int32(min(int64(current)*scaleUpLimitFactor, math.MaxInt32)), scaleUpLimitMinimum)
	maxAllowed, reason, message := maxReplicas, ReasonTooManyReplicas, MessageTooManyReplicas
	if maxReplicas > scaleUpLimit {
		maxAllowed, reason, message = scaleUpLimit, ReasonScaleUpLimit, MessageScaleUpLimit
	}
	switch {
	case desired < minReplicas:
		return minReplicas, ReasonTooFewReplicas, MessageTooFewReplicas
	case desired > maxAllowed:
		return maxAllowed, reason, message
	}
	return desired, ReasonDesiredWithinRange, MessageDesiredWithinRange
}

// limitWithBehavior applies the behavior's rate limits and [min, max] to the stabilized
// recommendation, as upstream's convertDesiredReplicasWithBehaviorRate.
func limitWithBehavior(in Input, desired int32, h History, up, down Rules) (int32, string, string) {
	current := in.Current
	switch {
	case desired > current:
		limit := max(scaleUpLimit(current, h, up, in.Now), current)
		maxAllowed, reason, message := in.Max, ReasonTooManyReplicas, MessageTooManyReplicas
		if maxAllowed > limit {
			maxAllowed, reason, message = limit, ReasonScaleUpLimit, MessageScaleUpLimit
		}
		if desired > maxAllowed {
			return maxAllowed, reason, message
		}
	case desired < current:
		limit := min(scaleDownLimit(current, h, down, in.Now), current)
		minAllowed, reason, message := in.Min, ReasonTooFewReplicas, MessageTooFewReplicas
		if minAllowed < limit {
			minAllowed, reason, message = limit, ReasonScaleDownLimit, MessageScaleDownLimit
		}
		if desired < minAllowed {
			return minAllowed, reason, message
		}
	}
	return desired, ReasonDesiredWithinRange, MessageDesiredWithinRange
}

// Policy arithmetic is done in int64 (and float64 for percentages) and saturated to int32, so that
// a policy value of the largest int32 (someone meaning "unlimited") allows everything instead of
// overflowing to a negative limit; for values that do not overflow it is upstream's.

// periodStart returns the replicas at the start of a policy period: current minus the scale-ups
// and plus the scale-downs recorded within it.
func periodStart(current int32, h History, period time.Duration, now time.Time) int64 {
	return int64(current) - changeInPeriod(h.ScaleUpEvents, period, now) + changeInPeriod(h.ScaleDownEvents, period, now)
}

// changeInPeriod sums the changes of events within period before now, as upstream's
// getReplicasChangePerPeriod, in int64 so that no number of events overflows it.
func changeInPeriod(events []ScaleEvent, period time.Duration, now time.Time) int64 {
	cutoff := now.Add(-period)
	var change int64
	for _, e := range events {
		if e.Time.After(cutoff) {
			change += int64(e.Change)
		}
	}
	return change
}

// saturate converts a replica count to int32, saturating at its bounds; a fraction is
// truncated toward zero, as upstream's int32 conversions.
func saturate(f float64) int32 {
	switch {
	case f >= math.MaxInt32:
		return math.MaxInt32
	case f <= math.MinInt32:
		return math.MinInt32
	}
	return int32(f)
}

// scaleUpLimit returns the most replicas the scale-up policies allow, as upstream's
// calculateScaleUpLimitWithScalingRules.
func scaleUpLimit(current int32, h History, r Rules, now time.Time) int32 {
	if r.SelectPolicy == SelectDisabled {
		return current
	}
	var result int32 = math.MinInt32
	pick := func(a, b int32) int32 { return max(a, b) }
	if r.SelectPolicy == SelectMin {
		result, pick = math.MaxInt32, func(a, b int32) int32 { return min(a, b) }
	}
	for _, p := range r.Policies {
		start := periodStart(current, h, p.Period, now)
		proposed := float64(start)
		switch p.Type {
		case PodsPolicy:
			proposed = float64(start + int64(p.Value))
		case PercentPolicy:
			// Rounded up so a small percentage still adds a pod.
			proposed = math.Ceil(float64(start) * (1 + float64(p.Value)/100))
		}
		result = pick(result, saturate(proposed))
	}
	return result
}

// scaleDownLimit returns the fewest replicas the scale-down policies allow, as upstream's
// calculateScaleDownLimitWithBehaviors.
func scaleDownLimit(current int32, h History, r Rules, now time.Time) int32 {
	if r.SelectPolicy == SelectDisabled {
		return current
	}
	var result int32 = math.MaxInt32
	pick := func(a, b int32) int32 { return min(a, b) }
	if r.SelectPolicy == SelectMin {
		result, pick = math.MinInt32, func(a, b int32) int32 { return max(a, b) }
	}
	for _, p := range r.Policies {
		start := periodStart(current, h, p.Period, now)
		proposed := float64(start)
		switch p.Type {
		case PodsPolicy:
			proposed = float64(start - int64(p.Value))
		case PercentPolicy:
			proposed = float64(start) * (1 - float64(p.Value)/100)
		}
		result = pick(result, saturate(proposed))
	}
	return result
}
