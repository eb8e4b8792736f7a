package hpaconv

import (
	"math"
	"strconv"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// Bounds of a PodAutoscaler's scaling rules (types.go), as autoscaling/v2's except for the
// number of policies, which autoscaling/v2 leaves unbounded.
const (
	maxStabilizationWindowSeconds = 3600
	maxPolicies                   = 10
	maxPolicyPeriodSeconds        = 1800
)

// convertBehavior returns the PodAutoscaler's behavior for the HPA's b. Without one it is nil:
// the PodAutoscaler then normalizes as the HPA does without one, with the tolerance and window of
// the server's flags (see ServerFlags). With one, every field is carried over, and the
// controller's defaults the HPA falls back on are written in (unless flags is nil): each direction's tolerance unset in
// b becomes flags.Tolerance, and an unset scale-down stabilization window becomes
// flags.DownscaleStabilization (autoscaling/v2 leaves that window unset when defaulting, for the
// controller's flag to decide). Every other unset field takes the same autoscaling/v2 default in
// both autoscalers.
func convertBehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior, flags *ControllerFlags, p *field.Path,
	rs *refusals) *podpilotv1alpha1.PodAutoscalerBehavior {
	if b == nil {
		return nil
	}
	out := &podpilotv1alpha1.PodAutoscalerBehavior{
		ScaleUp:   convertRules(b.ScaleUp, p.Child("scaleUp"), rs),
		ScaleDown: convertRules(b.ScaleDown, p.Child("scaleDown"), rs),
	}
	if flags == nil {
		out.ScaleUp, out.ScaleDown = nilIfEmpty(out.ScaleUp), nilIfEmpty(out.ScaleDown)
		return out
	}
	tolerance, ok := toleranceQuantity(flags.Tolerance)
	for _, r := range []*podpilotv1alpha1.ScalingRules{out.ScaleUp, out.ScaleDown} {
		if r.Tolerance != nil {
			continue
		}
		if !ok {
			rs.add(p, flags.Tolerance, "the controller's tolerance has no exact quantity for a PodAutoscaler's behavior tolerance")
			break
		}
		t := tolerance.DeepCopy()
		r.Tolerance = &t
	}
	if out.ScaleDown.StabilizationWindowSeconds == nil {
		// Upstream truncates the flag to whole seconds the same way.
		w := int64(flags.DownscaleStabilization.Seconds())
		if w > maxStabilizationWindowSeconds {
			rs.add(p.Child("scaleDown", "stabilizationWindowSeconds"), nil,
				"unset, so the controller's --horizontal-pod-autoscaler-downscale-stabilization %s applies, beyond the %d s a PodAutoscaler's window holds",
				flags.DownscaleStabilization, maxStabilizationWindowSeconds)
		}
		w32 := int32(min(w, maxStabilizationWindowSeconds))
		out.ScaleDown.StabilizationWindowSeconds = &w32
	}
	return out
}

// nilIfEmpty returns nil for rules that set nothing, so that an unset direction stays unset.
func nilIfEmpty(r *podpilotv1alpha1.ScalingRules) *podpilotv1alpha1.ScalingRules {
	if r.StabilizationWindowSeconds == nil && r.SelectPolicy == nil && r.Policies == nil && r.Tolerance == nil {
		return nil
	}
	return r
}

// toleranceQuantity returns t as a quantity whose approximate float, what the controller reads, is t.
func toleranceQuantity(t float64) (resource.Quantity, bool) {
	q, err := resource.ParseQuantity(strconv.FormatFloat(t, 'f', -1, 64))
	if err != nil {
		return resource.Quantity{}, false
	}
	return q, math.Abs(q.AsApproximateFloat64()-t) <= 1e-12
}

// convertRules returns the PodAutoscaler's rules for one direction, never nil (the caller fills
// in the controller's defaults), refusing what a PodAutoscaler's admission would reject.
func convertRules(r *autoscalingv2.HPAScalingRules, p *field.Path, rs *refusals) *podpilotv1alpha1.ScalingRules {
	out := &podpilotv1alpha1.ScalingRules{}
	if r == nil {
		return out
	}
	if w := r.StabilizationWindowSeconds; w != nil {
		if *w < 0 || *w > maxStabilizationWindowSeconds {
			rs.add(p.Child("stabilizationWindowSeconds"), *w, "must be within 0 to %d", maxStabilizationWindowSeconds)
		}
		out.StabilizationWindowSeconds = copyInt32(w)
	}
	if s := r.SelectPolicy; s != nil {
		switch *s {
		case autoscalingv2.MaxChangePolicySelect, autoscalingv2.MinChangePolicySelect, autoscalingv2.DisabledPolicySelect:
		default:
			rs.add(p.Child("selectPolicy"), quoted(string(*s)), "must be Max, Min or Disabled")
		}
		sp := podpilotv1alpha1.ScalingPolicySelect(*s)
		out.SelectPolicy = &sp
	}
	if r.Policies != nil {
		out.Policies = convertPolicies(r.Policies, p.Child("policies"), rs)
	}
	if t := r.Tolerance; t != nil {
		if t.Sign() < 0 {
			rs.add(p.Child("tolerance"), t.String(), "must be >= 0")
		}
		out.Tolerance = copyQuantity(t)
	}
	return out
}

func convertPolicies(ps []autoscalingv2.HPAScalingPolicy, p *field.Path, rs *refusals) []podpilotv1alpha1.ScalingPolicy {
	switch {
	case len(ps) == 0:
		rs.add(p, nil, "must hold at least one policy when set (leave it unset for the direction's defaults)")
	case len(ps) > maxPolicies:
		rs.add(p, len(ps), "a PodAutoscaler holds at most %d policies per direction", maxPolicies)
	}
	out := make([]podpilotv1alpha1.ScalingPolicy, 0, len(ps))
	for i, pol := range ps {
		pi := p.Index(i)
		if pol.Type != autoscalingv2.PodsScalingPolicy && pol.Type != autoscalingv2.PercentScalingPolicy {
			rs.add(pi.Child("type"), quoted(string(pol.Type)), "must be Pods or Percent")
		}
		if pol.Value < 1 {
			rs.add(pi.Child("value"), pol.Value, "must be at least 1")
		}
		if pol.PeriodSeconds < 1 || pol.PeriodSeconds > maxPolicyPeriodSeconds {
			rs.add(pi.Child("periodSeconds"), pol.PeriodSeconds, "must be within 1 to %d", maxPolicyPeriodSeconds)
		}
		out = append(out, podpilotv1alpha1.ScalingPolicy{
			Type: podpilotv1alpha1.ScalingPolicyType(pol.Type), Value: pol.Value, PeriodSeconds: pol.PeriodSeconds,
		})
	}
	return out
}
