package hpaconv

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// maxMetricsPerKind is the bound of a PodAutoscaler's customMetrics, objectMetrics,
// externalMetrics and containerResourceMetrics lists (resourceMetrics hold one per resource).
const maxMetricsPerKind = 10

// source is the metric source of one autoscaling/v2 metric: its JSON field name and target.
type source struct {
	field  string
	target *autoscalingv2.MetricTarget
}

// sourceOf returns m's source for m.type, refusing a type the PodAutoscaler does not know and a
// source set under another type's field.
func sourceOf(m *autoscalingv2.MetricSpec, p *field.Path, rs *refusals) (source, bool) {
	var set []source // in the order of autoscaling/v2's fields
	if m.Resource != nil {
		set = append(set, source{"resource", &m.Resource.Target})
	}
	if m.Pods != nil {
		set = append(set, source{"pods", &m.Pods.Target})
	}
	if m.Object != nil {
		set = append(set, source{"object", &m.Object.Target})
	}
	if m.External != nil {
		set = append(set, source{"external", &m.External.Target})
	}
	if m.ContainerResource != nil {
		set = append(set, source{"containerResource", &m.ContainerResource.Target})
	}
	want, known := map[autoscalingv2.MetricSourceType]string{
		autoscalingv2.ResourceMetricSourceType: "resource", autoscalingv2.PodsMetricSourceType: "pods",
		autoscalingv2.ObjectMetricSourceType: "object", autoscalingv2.ExternalMetricSourceType: "external",
		autoscalingv2.ContainerResourceMetricSourceType: "containerResource",
	}[m.Type]
	if !known {
		rs.add(p.Child("type"), quoted(string(m.Type)), "a PodAutoscaler knows the autoscaling/v2 metric types Resource, Pods, Object, External and ContainerResource")
		return source{}, false
	}
	var found source
	for _, s := range set {
		if s.field == want {
			found = s
			continue
		}
		rs.add(p.Child(s.field), nil, "must not be set when type is %s", m.Type)
	}
	if found.target == nil {
		rs.add(p.Child(want), nil, "is required when type is %s", m.Type)
		return source{}, false
	}
	return found, len(set) == 1
}

// addMetrics adds the PodAutoscaler form of each of metrics to spec, refusing what has none.
func addMetrics(spec *podpilotv1alpha1.PodAutoscalerSpec, metrics []autoscalingv2.MetricSpec, p *field.Path, rs *refusals) {
	for i := range metrics {
		m := &metrics[i]
		pm := p.Index(i)
		src, ok := sourceOf(m, pm, rs)
		if !ok {
			continue
		}
		switch m.Type {
		case autoscalingv2.ResourceMetricSourceType:
			addResource(spec, m.Resource, pm.Child("resource"), rs)
		case autoscalingv2.PodsMetricSourceType:
			addPods(spec, m.Pods, pm.Child("pods"), rs)
		case autoscalingv2.ObjectMetricSourceType:
			addObject(spec, m.Object, pm.Child("object"), rs)
		case autoscalingv2.ExternalMetricSourceType:
			if checkTarget(*src.target, pm.Child("external", "target"), "External", rs, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType) {
				spec.ExternalMetrics = append(spec.ExternalMetrics, podpilotv1alpha1.ExternalMetricSpec{
					MetricName: m.External.Metric.Name,
					Selector:   selector(m.External.Metric.Selector, pm.Child("external", "metric", "selector"), rs),
					TargetType: podpilotv1alpha1.ValueTargetType(src.target.Type),
					Value:      copyQuantity(src.target.Value), AverageValue: copyQuantity(src.target.AverageValue),
				})
			}
		case autoscalingv2.ContainerResourceMetricSourceType:
			addContainerResource(spec, m.ContainerResource, pm.Child("containerResource"), rs)
		}
	}
	checkListBounds(spec, p, rs)
}

func addPods(spec *podpilotv1alpha1.PodAutoscalerSpec, m *autoscalingv2.PodsMetricSource, p *field.Path, rs *refusals) {
	sel := selector(m.Metric.Selector, p.Child("metric", "selector"), rs)
	if !checkTarget(m.Target, p.Child("target"), "Pods (customMetrics)", rs, autoscalingv2.AverageValueMetricType) {
		return
	}
	for _, prev := range spec.CustomMetrics {
		if prev.MetricName == m.Metric.Name {
			rs.add(p.Child("metric", "name"), quoted(m.Metric.Name),
				"a PodAutoscaler has one Pods metric per metric name, whatever the selectors (spec.customMetrics is keyed by metricName)")
			return
		}
	}
	spec.CustomMetrics = append(spec.CustomMetrics, podpilotv1alpha1.CustomMetricSpec{
		MetricName: m.Metric.Name, AverageValue: m.Target.AverageValue.DeepCopy(), Selector: sel,
	})
}

func addResource(spec *podpilotv1alpha1.PodAutoscalerSpec, r *autoscalingv2.ResourceMetricSource, p *field.Path, rs *refusals) {
	okName := checkResourceName(r.Name, p.Child("name"), rs)
	okTarget := checkTarget(r.Target, p.Child("target"), "Resource", rs, autoscalingv2.UtilizationMetricType, autoscalingv2.AverageValueMetricType)
	for _, prev := range spec.ResourceMetrics {
		if prev.ResourceName == r.Name {
			rs.add(p.Child("name"), r.Name, "a PodAutoscaler has one Resource metric per resource (spec.resourceMetrics is keyed by resourceName)")
			return
		}
	}
	if !okName || !okTarget {
		return
	}
	spec.ResourceMetrics = append(spec.ResourceMetrics, podpilotv1alpha1.ResourceMetricSpec{
		ResourceName: r.Name, TargetType: podpilotv1alpha1.MetricTargetType(r.Target.Type),
		AverageUtilization: copyInt32(r.Target.AverageUtilization), AverageValue: copyQuantity(r.Target.AverageValue),
	})
}

func addContainerResource(spec *podpilotv1alpha1.PodAutoscalerSpec, c *autoscalingv2.ContainerResourceMetricSource, p *field.Path, rs *refusals) {
	okName := checkResourceName(c.Name, p.Child("name"), rs)
	okTarget := checkTarget(c.Target, p.Child("target"), "ContainerResource", rs, autoscalingv2.UtilizationMetricType, autoscalingv2.AverageValueMetricType)
	for _, prev := range spec.ContainerResourceMetrics {
		if prev.ResourceName == c.Name && prev.Container == c.Container {
			rs.add(p.Child("container"), c.Container, "a PodAutoscaler has one ContainerResource metric per container and resource (%s is there already)", c.Name)
			return
		}
	}
	if !okName || !okTarget {
		return
	}
	spec.ContainerResourceMetrics = append(spec.ContainerResourceMetrics, podpilotv1alpha1.ContainerResourceMetricSpec{
		ResourceName: c.Name, Container: c.Container, TargetType: podpilotv1alpha1.MetricTargetType(c.Target.Type),
		AverageUtilization: copyInt32(c.Target.AverageUtilization), AverageValue: copyQuantity(c.Target.AverageValue),
	})
}

func addObject(spec *podpilotv1alpha1.PodAutoscalerSpec, o *autoscalingv2.ObjectMetricSource, p *field.Path, rs *refusals) {
	sel := selector(o.Metric.Selector, p.Child("metric", "selector"), rs)
	if !checkTarget(o.Target, p.Child("target"), "Object", rs, autoscalingv2.ValueMetricType, autoscalingv2.AverageValueMetricType) {
		return
	}
	d := o.DescribedObject
	spec.ObjectMetrics = append(spec.ObjectMetrics, podpilotv1alpha1.ObjectMetricSpec{
		DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: d.APIVersion, Kind: d.Kind, Name: d.Name},
		MetricName:      o.Metric.Name, Selector: sel,
		TargetType: podpilotv1alpha1.ValueTargetType(o.Target.Type),
		Value:      copyQuantity(o.Target.Value), AverageValue: copyQuantity(o.Target.AverageValue),
	})
}

// checkResourceName refuses a resource other than cpu and memory, the two metrics.k8s.io serves.
func checkResourceName(name corev1.ResourceName, p *field.Path, rs *refusals) bool {
	if name == corev1.ResourceCPU || name == corev1.ResourceMemory {
		return true
	}
	rs.add(p, quoted(string(name)), "a PodAutoscaler reads cpu or memory only (metrics.k8s.io serves no other resource)")
	return false
}

// checkTarget refuses a target whose type is not among allowed, or whose fields disagree with
// its type: the type's own field must be set and positive, the others unset. The HPA reads the
// target by its type alone; the PodAutoscaler's admission rejects any other field, so a
// disagreeing target has no equivalent that says the same.
func checkTarget(t autoscalingv2.MetricTarget, p *field.Path, kind string, rs *refusals, allowed ...autoscalingv2.MetricTargetType) bool {
	n := len(*rs)
	typeOK := false
	for _, a := range allowed {
		typeOK = typeOK || t.Type == a
	}
	if !typeOK {
		rs.add(p.Child("type"), quoted(string(t.Type)), "a PodAutoscaler's %s metric takes %s", kind, joinTypes(allowed))
		return false
	}
	for _, f := range []struct {
		typ   autoscalingv2.MetricTargetType
		field string
		set   bool
	}{
		{autoscalingv2.ValueMetricType, "value", t.Value != nil},
		{autoscalingv2.AverageValueMetricType, "averageValue", t.AverageValue != nil},
		{autoscalingv2.UtilizationMetricType, "averageUtilization", t.AverageUtilization != nil},
	} {
		switch {
		case f.typ == t.Type && !f.set:
			rs.add(p.Child(f.field), nil, "is required when type is %s", t.Type)
		case f.typ != t.Type && f.set:
			rs.add(p.Child(f.field), nil, "must not be set when type is %s (a PodAutoscaler's admission rejects it)", t.Type)
		}
	}
	if len(*rs) == n {
		checkPositive(t, p, rs)
	}
	return len(*rs) == n
}

// checkPositive refuses a target value that is not positive, as the PodAutoscaler's admission
// does; t's type and fields agree.
func checkPositive(t autoscalingv2.MetricTarget, p *field.Path, rs *refusals) {
	switch t.Type {
	case autoscalingv2.UtilizationMetricType:
		if *t.AverageUtilization < 1 {
			rs.add(p.Child("averageUtilization"), *t.AverageUtilization, "must be at least 1")
		}
	case autoscalingv2.ValueMetricType:
		if t.Value.Sign() <= 0 {
			rs.add(p.Child("value"), t.Value.String(), "must be positive")
		}
	case autoscalingv2.AverageValueMetricType:
		if t.AverageValue.Sign() <= 0 {
			rs.add(p.Child("averageValue"), t.AverageValue.String(), "must be positive")
		}
	}
}

func joinTypes(ts []autoscalingv2.MetricTargetType) string {
	if len(ts) == 1 {
		return string(ts[0]) + " only"
	}
	return fmt.Sprintf("%s or %s", ts[0], ts[1])
}

// checkListBounds refuses more metrics of a kind than a PodAutoscaler holds.
func checkListBounds(spec *podpilotv1alpha1.PodAutoscalerSpec, p *field.Path, rs *refusals) {
	for _, l := range []struct {
		kind string
		n    int
	}{
		{"Pods", len(spec.CustomMetrics)}, {"Object", len(spec.ObjectMetrics)},
		{"External", len(spec.ExternalMetrics)}, {"ContainerResource", len(spec.ContainerResourceMetrics)},
	} {
		if l.n > maxMetricsPerKind {
			rs.add(p, fmt.Sprintf("%d %s metrics", l.n, l.kind), "a PodAutoscaler holds at most %d metrics of each kind", maxMetricsPerKind)
		}
	}
}
