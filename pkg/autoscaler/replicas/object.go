package replicas

import "fmt"

// ObjectInput is everything needed to propose replicas for one Object metric.
type ObjectInput struct {
	// SpecReplicas is the scale target's spec.replicas (used by Value targets).
	SpecReplicas int32
	// StatusReplicas is the scale target's status.replicas (used by AverageValue targets).
	StatusReplicas int32
	// Target is a Value or AverageValue target.
	Target Target
	// Value is the object's metric value in milli-units.
	Value int64
	// Pods are the scale target's pods; a Value target scales the count of running, ready ones.
	Pods []Pod
	// Tolerances of the usage ratio.
	Tolerances Tolerances
}

// CalculateObject proposes a replica count for an Object metric, as upstream's
// GetObjectMetricReplicas (Value: ratio value/target times the ready pods) and
// GetObjectPerPodMetricReplicas (AverageValue: value/(target × status replicas)) do; it follows
// the same rules as an External metric whose series sum to the object's value. A negative value
// is ErrNegativeValue.
func CalculateObject(in ObjectInput) (Result, error) {
	if err := in.Target.validate(); err != nil {
		return Result{}, err
	}
	if in.Value < 0 {
		return Result{}, fmt.Errorf("%dm: %w", in.Value, ErrNegativeValue)
	}
	return calculateTotal(ExternalInput{
		SpecReplicas: in.SpecReplicas, StatusReplicas: in.StatusReplicas, Target: in.Target, Pods: in.Pods, Tolerances: in.Tolerances,
	}, in.Value)
}
