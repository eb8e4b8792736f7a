package replicas

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
)

// ExternalInput is everything needed to propose replicas for one external metric.
type ExternalInput struct {
	// SpecReplicas is the scale target's spec.replicas (used by Value targets).
	SpecReplicas int32
	// StatusReplicas is the scale target's status.replicas (used by AverageValue targets).
	StatusReplicas int32
	// Target is a Value or AverageValue target.
	Target Target
	// Values are the metric's series values in milli-units; they are summed.
	Values []int64
	// Pods are the scale target's pods; a Value target scales the count of running, ready ones.
	Pods []Pod
	// Tolerances of the usage ratio.
	Tolerances Tolerances
}

// CalculateExternal proposes a replica count for an external metric, as upstream's
// GetExternalMetricReplicas (Value) and GetExternalPerPodMetricReplicas (AverageValue) do.
// From zero replicas a Value target proposes ceil(usage ratio), as upstream's
// getUsageRatioReplicaCount, so that a target scaled to zero can be scaled back up.
func CalculateExternal(in ExternalInput) (Result, error) {
	if err := in.Target.validate(); err != nil {
		return Result{}, err
	}
	if len(in.Values) == 0 {
		return Result{}, ErrNoMetrics
	}
	total := sumSaturating(in.Values)
	if in.Target.Type == Value {
		return externalValue(in, total)
	}
	if in.Target.Type != AverageValue {
		return Result{}, fmt.Errorf("%s target for an external metric: %w", in.Target.Type, ErrInvalidTarget)
	}
	res := Result{Replicas: in.StatusReplicas, Value: total, AverageValue: total}
	target := float64(in.Target.AverageValue)
	if in.StatusReplicas > 0 {
		res.UsageRatio = float64(total) / (target * float64(in.StatusReplicas))
		res.AverageValue = ceilDiv(total, int64(in.StatusReplicas))
	}
	if in.StatusReplicas == 0 || !in.Tolerances.Within(res.UsageRatio) {
		res.Replicas = ceilReplicas(float64(total) / target)
	}
	return res, nil
}

// externalValue proposes replicas for a total Value target: the usage ratio times the ready pods.
func externalValue(in ExternalInput, total int64) (Result, error) {
	ratio := float64(total) / float64(in.Target.Value)
	res := Result{Replicas: in.SpecReplicas, UsageRatio: ratio, Value: total}
	if in.SpecReplicas == 0 {
		res.Replicas = ceilReplicas(ratio)
		return res, nil
	}
	if in.Tolerances.Within(ratio) {
		return res, nil
	}
	if len(in.Pods) == 0 {
		return Result{}, ErrNoPods
	}
	for _, pod := range in.Pods {
		if pod.Phase == corev1.PodRunning && pod.Ready {
			res.Ready++
		}
	}
	res.Replicas = ceilReplicas(ratio * float64(res.Ready))
	return res, nil
}

// ceilDiv divides a non-negative total by a positive count, rounding up without overflow.
func ceilDiv(total, count int64) int64 {
	q := total / count
	if total%count != 0 {
		q++
	}
	return q
}

// sumSaturating adds values, capping at the largest int64.
func sumSaturating(values []int64) int64 {
	var total int64
	for _, v := range values {
		if v > 0 && total > math.MaxInt64-v {
			return math.MaxInt64
		}
		total += v
	}
	return total
}
