package normalize

import "time"

// DefaultDownscaleStabilizationWindow is upstream's default downscale stabilization window flag.
const DefaultDownscaleStabilizationWindow = 5 * time.Minute

// Recommendation is a run of equal raw replica proposals.
type Recommendation struct {
	// Replicas is the proposal before normalization.
	Replicas int32
	// Time is when it was last proposed: a stabilization window sees the run while it sees Time.
	Time time.Time
	// Since is when the run started; zero when unknown (a run read back from a checkpoint that
	// kept only its end). A checkpoint dates the newest run by it (see Checkpoint).
	Since time.Time
}

// ScaleEvent is one applied change of the replica count.
type ScaleEvent struct {
	// Change is the number of replicas added (scale-up) or removed (scale-down); always positive.
	Change int32
	// Time is when the change was applied.
	Time time.Time
}

// History is the state stabilization and rate limits need across rounds. It is plain data: the
// controller keeps it, checkpoints it and passes it back in; functions here return an updated
// copy.
//
// Recommendations are kept as runs of equal consecutive recommendations, each dated the last
// round that made it (a per-round list is a history of one-round runs, so both read alike). A
// round that makes no recommendation (its metrics failed) records nothing, so a run never
// stretches over rounds that did not make it, as upstream records nothing then. A stabilization
// window sees a run exactly when it sees the run's last round, so the window's maximum (or
// minimum) over runs equals upstream's over its per-round list.
type History struct {
	// Recommendations are the recent raw proposals as runs, oldest first.
	Recommendations []Recommendation
	// ScaleUpEvents are the recent scale-ups (recorded only with a Behavior), in upstream's slot
	// order: a new event replaces the last one older than its direction's longest policy period,
	// else it is appended (see RecordScaleEvent).
	ScaleUpEvents []ScaleEvent
	// ScaleDownEvents are the recent scale-downs, in the same slot order as ScaleUpEvents.
	ScaleDownEvents []ScaleEvent
	// ForecastFloors are the floors the forecast asked for within its hysteresis window, as a
	// staircase (see HoldFloor). Only the leader's memory keeps them, not the status checkpoint:
	// a new leader starts without them, and its first floors follow the forecast (at worst one
	// more rescale, never fewer replicas than the forecast or the metrics ask for).
	ForecastFloors []Recommendation
}

// PolicyType is how a scaling policy measures change, as in autoscaling/v2.
type PolicyType string

const (
	// PodsPolicy limits the change to an absolute number of pods per period.
	PodsPolicy PolicyType = "Pods"
	// PercentPolicy limits the change to a percentage of the replicas at the period's start.
	PercentPolicy PolicyType = "Percent"
)

// Policy is one scaling policy.
type Policy struct {
	// Type is Pods or Percent.
	Type PolicyType
	// Value is the number of pods or the percentage.
	Value int32
	// Period is the window over which past changes count against the policy.
	Period time.Duration
}

// SelectPolicy chooses among the policies' limits, as in autoscaling/v2.
type SelectPolicy string

const (
	// SelectMax picks the policy allowing the largest change (the default).
	SelectMax SelectPolicy = "Max"
	// SelectMin picks the policy allowing the smallest change.
	SelectMin SelectPolicy = "Min"
	// SelectDisabled forbids changes in this direction.
	SelectDisabled SelectPolicy = "Disabled"
)

// Rules are the scaling rules of one direction; zero fields take autoscaling/v2 defaults.
type Rules struct {
	// StabilizationWindow is the look-back of the stabilization; nil means the default
	// (0 for scale-up, the downscale stabilization window for scale-down).
	StabilizationWindow *time.Duration
	// SelectPolicy chooses among Policies; empty means Max.
	SelectPolicy SelectPolicy
	// Policies limit the rate of change; empty means the default policies.
	Policies []Policy
	// Tolerance overrides the usage-ratio tolerance of this direction; nil keeps the configured one.
	Tolerance *float64
}

// Behavior configures scaling per direction, as autoscaling/v2's HorizontalPodAutoscalerBehavior.
type Behavior struct {
	// ScaleUp holds the scale-up rules; nil means all defaults.
	ScaleUp *Rules
	// ScaleDown holds the scale-down rules; nil means all defaults.
	ScaleDown *Rules
}

// DefaultScaleUpRules returns autoscaling/v2's default scale-up rules: no stabilization, and the
// larger of doubling or adding 4 pods every 15 seconds.
func DefaultScaleUpRules() Rules {
	window := time.Duration(0)
	return Rules{
		StabilizationWindow: &window,
		SelectPolicy:        SelectMax,
		Policies: []Policy{
			{Type: PercentPolicy, Value: 100, Period: 15 * time.Second},
			{Type: PodsPolicy, Value: 4, Period: 15 * time.Second},
		},
	}
}

// DefaultScaleDownRules returns autoscaling/v2's default scale-down rules: the given stabilization
// window and removing up to all pods every 15 seconds.
func DefaultScaleDownRules(window time.Duration) Rules {
	return Rules{
		StabilizationWindow: &window,
		SelectPolicy:        SelectMax,
		Policies:            []Policy{{Type: PercentPolicy, Value: 100, Period: 15 * time.Second}},
	}
}

// withDefaults fills the unset fields of r from def.
func (r *Rules) withDefaults(def Rules) Rules {
	if r == nil {
		return def
	}
	out := *r
	if out.StabilizationWindow == nil {
		out.StabilizationWindow = def.StabilizationWindow
	}
	if out.SelectPolicy == "" {
		out.SelectPolicy = def.SelectPolicy
	}
	if len(out.Policies) == 0 {
		out.Policies = def.Policies
	}
	return out
}

// Resolve returns the behavior's rules with defaults applied; downscaleWindow is the default
// scale-down stabilization window.
func (b Behavior) Resolve(downscaleWindow time.Duration) (up, down Rules) {
	return b.ScaleUp.withDefaults(DefaultScaleUpRules()), b.ScaleDown.withDefaults(DefaultScaleDownRules(downscaleWindow))
}

// window returns the resolved stabilization window.
func (r Rules) window() time.Duration {
	if r.StabilizationWindow == nil {
		return 0
	}
	return *r.StabilizationWindow
}

// longestPeriod returns the longest policy period.
func (r Rules) longestPeriod() time.Duration {
	var longest time.Duration
	for _, p := range r.Policies {
		longest = max(longest, p.Period)
	}
	return longest
}

// LongestPeriod returns the longest policy period of b's rules of both directions, defaults
// applied: how far back a scale event can still count.
func LongestPeriod(b *Behavior) time.Duration {
	if b == nil {
		return 0
	}
	up, down := b.Resolve(0)
	return max(up.longestPeriod(), down.longestPeriod())
}
