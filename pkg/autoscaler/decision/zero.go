package decision

// ScaledToZero tells whether the autoscaler scaled its target to zero replicas and holds it there,
// to scale it back up when a metric asks for it, as upstream's HPAScaleToZero condition. A target
// at zero without it was set to zero by a person, which disables scaling.
const ScaledToZero ConditionType = "ScaledToZero"

// Reasons of the ScaledToZero condition.
const (
	// ReasonScaledToZero means the autoscaler scaled the target to zero and holds it there.
	ReasonScaledToZero = "ScaledToZero"
	// ReasonNotScaledToZero means the autoscaler's last rescale left the target above zero.
	ReasonNotScaledToZero = "NotScaledToZero"
)

// scalesToZero reports whether metrics can ask for replicas while the target has none: only
// Object and External metrics, which do not come from the target's pods, can.
func scalesToZero(metrics []Metric) bool {
	for _, m := range metrics {
		if m.Kind == ExternalMetric || m.Kind == ObjectMetric {
			return true
		}
	}
	return false
}

// fromZero reports whether a target at zero replicas is the autoscaler's to scale, as upstream's
// shouldComputeMetricsForZeroReplicas: it scaled the target to zero and either still has a metric
// that can scale it back up or has a minReplicas above zero to bring it back to.
func fromZero(in Input) bool {
	return in.ScaledToZero && (scalesToZero(in.Metrics) || in.MinReplicas != 0)
}

// backFromZero raises desired to minReplicas for a target at zero: the autoscaler scaled it to
// zero before minReplicas was raised above zero, as upstream.
func backFromZero(in Input, desired int32) int32 {
	if in.SpecReplicas == 0 && desired < in.MinReplicas {
		return in.MinReplicas
	}
	return desired
}

// holdsAtZero reports whether rescaling to desired scales the target to zero with minReplicas 0
// and a metric that can scale it back up, as upstream's condition for ScaledToZero True.
func holdsAtZero(in Input, desired int32) bool {
	return in.SpecReplicas > 0 && desired == 0 && in.MinReplicas == 0 && scalesToZero(in.Metrics)
}

// ScaledToZeroCondition is the ScaledToZero condition to set once the rescale to DesiredReplicas
// has succeeded (upstream sets it after every successful rescale and leaves it otherwise).
func (d Decision) ScaledToZeroCondition() Condition {
	if d.HoldsAtZero {
		return Condition{Type: ScaledToZero, Status: true, Reason: ReasonScaledToZero,
			Message: "the PodAutoscaler controller scaled the workload to zero"}
	}
	return Condition{Type: ScaledToZero, Status: false, Reason: ReasonNotScaledToZero,
		Message: "the PodAutoscaler controller did not scale the workload to zero"}
}
