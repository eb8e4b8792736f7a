package specconv

import (
	"k8s.io/apimachinery/pkg/api/resource"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// Target values are converted with replicas.MilliOf: a value beyond int64 milli-units leaves the
// target's value zero and its Err set, which the calculators report as an invalid target.

// CustomTarget converts a custom (pods) metric's target, always an average value.
func CustomTarget(m podpilotv1alpha1.CustomMetricSpec) replicas.Target {
	t := replicas.Target{Type: replicas.AverageValue}
	t.AverageValue, t.Err = replicas.MilliOf(m.AverageValue)
	return t
}

// ResourceTarget converts a resource metric's target. ok reports whether the target type is
// known and its value set; otherwise the target keeps a zero type or value, which the
// calculator rejects as an invalid target.
func ResourceTarget(m podpilotv1alpha1.ResourceMetricSpec) (t replicas.Target, ok bool) {
	t = replicas.Target{Resource: m.ResourceName}
	switch m.TargetType {
	case podpilotv1alpha1.UtilizationMetricType:
		t.Type = replicas.Utilization
		if m.AverageUtilization != nil {
			t.Utilization, ok = *m.AverageUtilization, true
		}
	case podpilotv1alpha1.AverageValueMetricType:
		t.Type = replicas.AverageValue
		if m.AverageValue != nil {
			t.AverageValue, t.Err = replicas.MilliOf(*m.AverageValue)
			ok = true
		}
	}
	return t, ok
}

// ContainerResourceTarget converts a container resource metric's target as ResourceTarget does,
// for the named container; an unset value stays zero, which the calculator rejects.
func ContainerResourceTarget(m podpilotv1alpha1.ContainerResourceMetricSpec) replicas.Target {
	t, _ := ResourceTarget(podpilotv1alpha1.ResourceMetricSpec{
		ResourceName: m.ResourceName, TargetType: m.TargetType, AverageUtilization: m.AverageUtilization, AverageValue: m.AverageValue,
	})
	t.Container = m.Container
	return t
}

// ValueTarget converts an Object or External metric's target; an unset value stays zero, which
// the calculator rejects as an invalid target.
func ValueTarget(typ podpilotv1alpha1.ValueTargetType, value, average *resource.Quantity) replicas.Target {
	var t replicas.Target
	switch typ {
	case podpilotv1alpha1.ValueTarget:
		t.Type = replicas.Value
		if value != nil {
			t.Value, t.Err = replicas.MilliOf(*value)
		}
	case podpilotv1alpha1.AverageValueTarget:
		t.Type = replicas.AverageValue
		if average != nil {
			t.AverageValue, t.Err = replicas.MilliOf(*average)
		}
	}
	return t
}
