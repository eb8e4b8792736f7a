package replicas

import (
	"fmt"

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
// GetExternalMetricReplicas (Value) and GetExternalPerPodMetricReplicas (AverageValue) do: the
// series values are summed and the sum is the metric's value. A negative series is
// ErrNegativeValue, and a sum beyond int64 milli-units ErrValueOutOfRange.
func CalculateExternal(in ExternalInput) (Result, error) {
	if err := in.Target.validate(); err != nil {
		return Result{}, err
	}
	if len(in.Values) == 0 {
		return Result{}, ErrNoMetrics
	}
	var sum checkedSum
	for i, v := range in.Values {
		if v < 0 {
			return Result{}, fmt.Errorf("series %d of %d: %dm: %w", i+1, len(in.Values), v, ErrNegativeValue)
		}
		sum.add(v)
	}
	if sum.err != nil {
		return Result{}, fmt.Errorf("%d series: %w", len(in.Values), sum.err)
	}
	return calculateTotal(in, sum.total)
}

// calculateTotal proposes replicas for one value that describes the whole target (an external
// metric's sum, an object's value): a Value target scales the ready pods by value over target; an
// AverageValue target divides the value by the status replicas. total must not be negative.
func calculateTotal(in ExternalInput, total int64) (Result, error) {
	switch in.Target.Type {
	case Value:
		return totalValue(in, total)
	case AverageValue:
		return totalAverage(in, total), nil
	}
	return Result{}, fmt.Errorf("%s target for a metric of the whole target: %w", in.Target.Type, ErrInvalidTarget)
}

// totalAverage proposes ceil(total / target) unless total / (target × status replicas) is within
// tolerance. The average reported is total / status replicas, rounded up, and 0 at 0 replicas
// (upstream would divide by zero).
func totalAverage(in ExternalInput, total int64) Result {
	res := Result{Replicas: in.StatusReplicas, Value: total}
	target := float64(in.Target.AverageValue)
	if in.StatusReplicas > 0 {
		res.UsageRatio = float64(total) / (target * float64(in.StatusReplicas))
		res.AverageValue = ceilDiv(total, int64(in.StatusReplicas))
	}
	if in.StatusReplicas == 0 || !in.Tolerances.Within(res.UsageRatio) {
		res.Replicas = ceilReplicas(float64(total) / target)
	}
	return res
}

// totalValue proposes replicas for a Value target, as upstream's getUsageRatioReplicaCount: at 0
// spec replicas ceil(ratio); otherwise the current replicas within tolerance, else ratio times the
// running and ready pods.
func totalValue(in ExternalInput, total int64) (Result, error) {
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

// ceilDiv divides total by a positive count, rounding up without overflow.
func ceilDiv(total, count int64) int64 {
	q := total / count
	if total%count > 0 {
		q++
	}
	return q
}
