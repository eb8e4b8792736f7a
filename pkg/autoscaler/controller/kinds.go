package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// kindMetricsOf appends pa's object, external and container resource metrics to out, in that
// order, each with this round's data or the error that kept it from being read.
func (c *Controller) kindMetricsOf(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, rec *reconcile, out []decision.Metric) []decision.Metric {
	for _, m := range pa.Spec.ObjectMetrics {
		start := c.clock.Now()
		gk := describedKind(m.DescribedObject)
		dm := decision.Metric{Kind: decision.ObjectMetric, Name: m.MetricName, DescribedKind: m.DescribedObject.Kind, DescribedName: m.DescribedObject.Name,
			Target: valueTarget(m.TargetType, m.Value, m.AverageValue)}
		sel, err := metricSelector(m.Selector)
		if err == nil {
			var v int64
			if v, err = c.fetcher.ObjectMetric(ctx, pa.Namespace, gk, m.DescribedObject.Name, m.MetricName, sel); err == nil {
				dm.Values = []int64{v}
			}
		}
		dm.FetchErr = err
		rec.fetched(start)
		out = append(out, dm)
	}
	for _, m := range pa.Spec.ExternalMetrics {
		start := c.clock.Now()
		dm := decision.Metric{Kind: decision.ExternalMetric, Name: m.MetricName, Target: valueTarget(m.TargetType, m.Value, m.AverageValue)}
		sel, err := metricSelector(m.Selector)
		if err == nil {
			dm.Values, err = c.fetcher.ExternalMetric(ctx, pa.Namespace, m.MetricName, sel)
		}
		dm.FetchErr = err
		rec.fetched(start)
		out = append(out, dm)
	}
	for _, m := range pa.Spec.ContainerResourceMetrics {
		start := c.clock.Now()
		dm := decision.Metric{Kind: decision.ContainerResourceMetric, Name: string(m.ResourceName), Target: containerTarget(m)}
		cs, err := c.fetcher.ContainerResourceMetric(ctx, pa.Namespace, m.ResourceName, m.Container)
		dm.Samples, dm.NoContainer, dm.FetchErr = cs.Samples, cs.NoContainer, err
		rec.fetched(start)
		out = append(out, dm)
	}
	return out
}

// describedKind is the group and kind of a described object; its version does not matter.
func describedKind(ref podpilotv1alpha1.MetricObjectReference) schema.GroupKind {
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
}

// valueTarget converts an Object or External target; an unset value stays zero, which the
// calculator rejects as an invalid target.
func valueTarget(typ podpilotv1alpha1.ValueTargetType, value, average *resource.Quantity) replicas.Target {
	var t replicas.Target
	switch typ {
	case podpilotv1alpha1.ValueTarget:
		t.Type = replicas.Value
		if value != nil {
			t.Value = value.MilliValue()
		}
	case podpilotv1alpha1.AverageValueTarget:
		t.Type = replicas.AverageValue
		if average != nil {
			t.AverageValue = average.MilliValue()
		}
	}
	return t
}

// containerTarget converts a container resource target, as resourceTarget does.
func containerTarget(m podpilotv1alpha1.ContainerResourceMetricSpec) replicas.Target {
	t := resourceTarget(podpilotv1alpha1.ResourceMetricSpec{
		ResourceName: m.ResourceName, TargetType: m.TargetType, AverageUtilization: m.AverageUtilization, AverageValue: m.AverageValue,
	})
	t.Container = m.Container
	return t
}

// containerRequestsOf returns each container's own cpu and memory requests in milli-units, for
// the regular containers and the restartable init containers (native sidecars), as upstream's
// calculateRequests matches a ContainerResource metric's container among both.
func containerRequestsOf(p *corev1.Pod) map[string]map[corev1.ResourceName]int64 {
	out := make(map[string]map[corev1.ResourceName]int64, len(p.Spec.Containers))
	add := func(c corev1.Container) {
		reqs := make(map[corev1.ResourceName]int64, 2)
		for _, r := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if q, ok := c.Resources.Requests[r]; ok {
				reqs[r] = q.MilliValue()
			}
		}
		out[c.Name] = reqs
	}
	for _, c := range p.Spec.Containers {
		add(c)
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	return out
}
