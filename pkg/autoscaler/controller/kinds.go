package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// objectMetric reads a metric of one object of namespace.
func (c *Controller) objectMetric(ctx context.Context, namespace string, m podpilotv1alpha1.ObjectMetricSpec) (decision.Metric, error) {
	dm := decision.Metric{Kind: decision.ObjectMetric, Name: m.MetricName, DescribedKind: m.DescribedObject.Kind, DescribedName: m.DescribedObject.Name,
		Target: specconv.ValueTarget(m.TargetType, m.Value, m.AverageValue)}
	sel, err := specconv.MetricSelector(m.Selector)
	if err == nil {
		var v int64
		if v, err = c.fetcher.ObjectMetric(ctx, namespace, describedKind(m.DescribedObject), m.DescribedObject.Name, m.MetricName, sel); err == nil {
			dm.Values = []int64{v}
		}
	}
	return dm, err
}

// externalMetric reads an external metric for namespace.
func (c *Controller) externalMetric(ctx context.Context, namespace string, m podpilotv1alpha1.ExternalMetricSpec) (decision.Metric, error) {
	dm := decision.Metric{Kind: decision.ExternalMetric, Name: m.MetricName, Target: specconv.ValueTarget(m.TargetType, m.Value, m.AverageValue),
		Fallback: specconv.Fallback(m.Fallback)}
	sel, err := specconv.MetricSelector(m.Selector)
	if err == nil {
		dm.Values, err = c.fetcher.ExternalMetric(ctx, namespace, m.MetricName, sel)
	}
	return dm, err
}

// containerResourceMetric reads a resource metric of one container of namespace's pods.
func (c *Controller) containerResourceMetric(ctx context.Context, namespace string, m podpilotv1alpha1.ContainerResourceMetricSpec) (decision.Metric, error) {
	dm := decision.Metric{Kind: decision.ContainerResourceMetric, Name: string(m.ResourceName), Target: specconv.ContainerResourceTarget(m)}
	var err error
	dm.Samples, err = c.fetcher.ContainerResourceMetric(ctx, namespace, m.ResourceName, m.Container)
	return dm, err
}

// describedKind is the group and kind of a described object; its version does not matter.
func describedKind(ref podpilotv1alpha1.MetricObjectReference) schema.GroupKind {
	return schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
}

// containerRequestsOf returns each container's own cpu and memory requests in effect
// (ineffect.go) in milli-units, for the regular containers and the restartable init containers
// (native sidecars), as upstream's calculateRequests matches a ContainerResource metric's
// container among both. A request beyond int64 milli-units is absent, and its error
// (replicas.ErrValueOutOfRange) is returned by resource, nil when there is none.
func containerRequestsOf(p *corev1.Pod) (map[string]map[corev1.ResourceName]int64, map[corev1.ResourceName]error) {
	out := make(map[string]map[corev1.ResourceName]int64, len(p.Spec.Containers))
	var errs map[corev1.ResourceName]error
	add := func(c corev1.Container) {
		reqs := make(map[corev1.ResourceName]int64, 2)
		for _, r := range [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			q, ok := containerRequest(p, &c, r)
			if !ok {
				continue
			}
			v, err := replicas.MilliOf(q)
			if err != nil {
				if errs == nil {
					errs = make(map[corev1.ResourceName]error, 1)
				}
				errs[r] = fmt.Errorf("%s request of container %s: %w", r, c.Name, err)
				continue
			}
			reqs[r] = v
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
	return out, errs
}
