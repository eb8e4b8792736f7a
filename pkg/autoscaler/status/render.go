package status

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// MetricStatuses converts the decision's per-metric outcomes; a failed metric keeps its type
// and name without values. Object and External metrics show their value, and their average per
// pod for AverageValue targets; the others their average per pod, and utilization for
// Utilization targets.
func MetricStatuses(statuses []decision.MetricStatus) []podpilotv1alpha1.MetricStatus {
	var out []podpilotv1alpha1.MetricStatus
	for _, s := range statuses {
		ms := metricIdentity(s)
		if s.Err == nil {
			switch s.Kind {
			case decision.ObjectMetric, decision.ExternalMetric:
				ms.Value = current(s.Result.Value, s.Target)
				if s.Target.Type == replicas.AverageValue {
					ms.AverageValue = current(s.Result.AverageValue, s.Target)
				}
			default:
				ms.AverageValue = current(s.Result.AverageValue, s.Target)
				if s.Target.Type == replicas.Utilization {
					ms.AverageUtilization = ptr.To(s.Result.Utilization)
				}
			}
		}
		out = append(out, ms)
	}
	return out
}

// metricIdentity is what names s in status.currentMetrics (and status.prediction.metrics): its
// type, name, object and container, without values.
func metricIdentity(s decision.MetricStatus) podpilotv1alpha1.MetricStatus {
	return MetricStatusOf(s.ID())
}

// MetricStatusOf is the status entry, without values, of the metric named id.
func MetricStatusOf(id decision.MetricID) podpilotv1alpha1.MetricStatus {
	return podpilotv1alpha1.MetricStatus{Type: sourceTypeOf(id.Kind), Name: id.Name, Container: id.Container, DescribedObject: id.DescribedObject}
}

// current is an average value in milli-units as a quantity: memory in whole bytes (rounded to
// the nearest, without overflowing near the largest int64) and binary units, everything else in
// decimal units.
func current(milli int64, t replicas.Target) *resource.Quantity {
	if t.Resource == "memory" {
		bytes := milli / 1000
		if milli%1000 >= 500 {
			bytes++
		}
		return resource.NewQuantity(bytes, resource.BinarySI)
	}
	return resource.NewMilliQuantity(milli, resource.DecimalSI)
}

// TargetsOf renders status.targets, e.g. "1500/2k, 30%/50%, 120Mi/256Mi"; a metric without a
// value this round (a failure, or no status: a fast path) shows <unknown>, or <fallback N> while
// it proposes its fallback's N replicas. Spec metrics are
// joined to their statuses by identity. Object and External metrics show their value, or their
// average per pod followed by "(avg)" for AverageValue targets, as kubectl shows HPAs.
func TargetsOf(pa *podpilotv1alpha1.PodAutoscaler, statuses []decision.MetricStatus) string {
	var parts []string
	value := func(id decision.MetricID) (decision.MetricStatus, bool) {
		for _, s := range statuses {
			if s.ID() == id {
				return s, s.Err == nil
			}
		}
		return decision.MetricStatus{}, false
	}
	for _, m := range pa.Spec.CustomMetrics {
		cur := "<unknown>"
		if s, ok := value(decision.MetricID{Kind: decision.PodsMetric, Name: m.MetricName}); ok {
			cur = current(s.Result.AverageValue, s.Target).String()
		}
		parts = append(parts, cur+"/"+m.AverageValue.String())
	}
	for _, m := range pa.Spec.ResourceMetrics {
		s, ok := value(decision.MetricID{Kind: decision.ResourceMetric, Name: string(m.ResourceName)})
		parts = append(parts, resourceTargets(m.TargetType, m.AverageUtilization, m.AverageValue, s, ok))
	}
	for _, m := range pa.Spec.ObjectMetrics {
		s, ok := value(decision.MetricID{Kind: decision.ObjectMetric, Name: m.MetricName, DescribedObject: m.DescribedObject.Kind + "/" + m.DescribedObject.Name})
		parts = append(parts, valueTargets(m.TargetType, m.Value, m.AverageValue, s, ok, "<unknown>"))
	}
	for _, m := range pa.Spec.ExternalMetrics {
		s, ok := value(decision.MetricID{Kind: decision.ExternalMetric, Name: m.MetricName})
		unknown := "<unknown>"
		if s.FallbackActive {
			unknown = fmt.Sprintf("<fallback %d>", s.Result.Replicas)
		}
		parts = append(parts, valueTargets(m.TargetType, m.Value, m.AverageValue, s, ok, unknown))
	}
	for _, m := range pa.Spec.ContainerResourceMetrics {
		s, ok := value(decision.MetricID{Kind: decision.ContainerResourceMetric, Name: string(m.ResourceName), Container: m.Container})
		parts = append(parts, resourceTargets(m.TargetType, m.AverageUtilization, m.AverageValue, s, ok))
	}
	out := strings.Join(parts, ", ")
	if len(out) > maxTargetsLength {
		out = out[:maxTargetsLength-len("...")] + "..."
	}
	return out
}

// resourceTargets renders a Resource or ContainerResource metric's "current/target".
func resourceTargets(typ podpilotv1alpha1.MetricTargetType, utilization *int32, average *resource.Quantity, s decision.MetricStatus, ok bool) string {
	cur, want := "<unknown>", "<unset>"
	switch {
	case typ == podpilotv1alpha1.UtilizationMetricType && utilization != nil:
		want = fmt.Sprintf("%d%%", *utilization)
		if ok {
			cur = fmt.Sprintf("%d%%", s.Result.Utilization)
		}
	case average != nil:
		want = average.String()
		if ok {
			cur = current(s.Result.AverageValue, s.Target).String()
		}
	}
	return cur + "/" + want
}

// valueTargets renders an Object or External metric's "current/target", with " (avg)" after an
// AverageValue target; a metric without a value shows unknown (an External metric in fallback
// shows "<fallback N>", N its fallback replicas).
func valueTargets(typ podpilotv1alpha1.ValueTargetType, value, average *resource.Quantity, s decision.MetricStatus, ok bool, unknown string) string {
	cur, want := unknown, "<unset>"
	switch {
	case typ == podpilotv1alpha1.ValueTarget && value != nil:
		want = value.String()
		if ok {
			cur = current(s.Result.Value, s.Target).String()
		}
	case typ == podpilotv1alpha1.AverageValueTarget && average != nil:
		want = average.String() + " (avg)"
		if ok {
			cur = current(s.Result.AverageValue, s.Target).String()
		}
	}
	return cur + "/" + want
}
