package specconv

import (
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// Behavior converts the spec's behavior. Without one, normalize applies the
// HPA's legacy normalization (downscale stabilization window from the flag,
// scale-up limit max(2 × current, 4)); unset fields of a behavior take the
// autoscaling/v2 defaults in normalize. The spec itself is never defaulted.
func Behavior(b *podpilotv1alpha1.PodAutoscalerBehavior) *normalize.Behavior {
	if b == nil {
		return nil
	}
	return &normalize.Behavior{ScaleUp: rules(b.ScaleUp), ScaleDown: rules(b.ScaleDown)}
}

func rules(r *podpilotv1alpha1.ScalingRules) *normalize.Rules {
	if r == nil {
		return nil
	}
	out := &normalize.Rules{}
	if r.StabilizationWindowSeconds != nil {
		w := time.Duration(*r.StabilizationWindowSeconds) * time.Second
		out.StabilizationWindow = &w
	}
	if r.SelectPolicy != nil {
		out.SelectPolicy = normalize.SelectPolicy(*r.SelectPolicy)
	}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, normalize.Policy{
			Type: normalize.PolicyType(p.Type), Value: p.Value, Period: time.Duration(p.PeriodSeconds) * time.Second,
		})
	}
	if r.Tolerance != nil {
		t := r.Tolerance.AsApproximateFloat64()
		out.Tolerance = &t
	}
	return out
}
