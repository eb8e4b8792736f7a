package decision

import (
	"fmt"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// Decide makes one round's decision for one autoscaler, as upstream's reconcileAutoscaler minus
// the I/O: a target at zero replicas disables scaling unless the autoscaler scaled it to zero
// (see fromZero); replicas outside [min, max] are brought back at once; otherwise the largest
// metric proposal is normalized. When some metrics fail, it scales only up on the valid ones and
// never down; when all fail, it keeps the current replicas.
func Decide(in Input) Decision {
	in.MinReplicas = effectiveMin(in) // an active schedule floor raises the minimum (proposals.go)
	current := in.SpecReplicas
	d := Decision{DesiredReplicas: current, History: normalize.SeedHistory(in.History, current, in.Now)}
	switch {
	case current == 0:
		if fromZero(in) {
			break
		}
		d.Conditions = []Condition{{Type: ScalingActive, Status: false, Reason: ReasonScalingDisabled,
			Message: "scaling is disabled since the replica count of the target is zero"}}
		return d
	case current > in.MaxReplicas:
		return fastPath(d, in.MaxReplicas, "Current number of replicas above Spec.MaxReplicas")
	case current < in.MinReplicas:
		return belowMin(in, d) // the floor of a schedule window, or minReplicas (proposals.go)
	}

	c := combine(in)
	d.Statuses = c.statuses
	d.MetricsErr = c.err(len(in.Metrics))
	if c.invalid >= len(in.Metrics) || (c.invalid > 0 && c.replicas < current) {
		reason := c.firstFailure.FailureReason
		if len(in.Metrics) == 0 {
			reason = ReasonInvalidMetricSourceType
		}
		d.Conditions = []Condition{{Type: ScalingActive, Status: false, Reason: reason,
			Message: "the PodAutoscaler was unable to compute the replica count: " + d.MetricsErr.Error()}}
		return d
	}

	c, d.History = withForecast(in, c, d.History) // the forecast's held proposal, scale-out only (proposals.go)
	switch {
	case c.replicas > current:
		d.Reason = fmt.Sprintf("%s above target", c.metric)
	case c.replicas < current:
		d.Reason = "All metrics below target"
	}
	n := normalize.Normalize(normalize.Input{
		Current: current, Desired: c.replicas, Min: in.MinReplicas, Max: in.MaxReplicas, Behavior: in.Behavior,
		DownscaleStabilizationWindow: in.Config.DownscaleStabilizationWindow, History: d.History, Now: in.Now,
	})
	desired := backFromZero(in, n.Replicas)
	d.DesiredReplicas, d.Rescale, d.Metric, d.History = desired, desired != current, c.metric, n.History
	d.HoldsAtZero = holdsAtZero(in, desired)
	d.Explanation = explain(in, c, n, desired)
	d.Conditions = []Condition{
		{Type: ScalingActive, Status: true, Reason: ReasonValidMetricFound,
			Message: "the PodAutoscaler was able to successfully calculate a replica count from " + c.metric},
		{Type: AbleToScale, Status: true, Reason: n.StabilizeReason, Message: n.StabilizeMessage},
		{Type: ScalingLimited, Status: n.Limited, Reason: n.LimitReason, Message: n.LimitMessage},
	}
	return d
}

// fastPath brings replicas outside [min, max] back to the bound without looking at metrics. As
// upstream's reconcileAutoscaler, it determines no condition: ScalingActive and ScalingLimited
// keep what the last round with metrics set, and the rescale sets AbleToScale.
func fastPath(d Decision, desired int32, reason string) Decision {
	d.DesiredReplicas, d.Rescale, d.Reason = desired, true, reason
	return d
}
