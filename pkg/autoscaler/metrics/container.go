package metrics

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// containerKey identifies one container's view of a namespace's pod metrics.
type containerKey struct {
	namespace, container string
}

// containerUsage is one container's usage in a namespace: per resource, the samples of the pods
// whose metrics list the container with that resource.
type containerUsage struct {
	samples map[corev1.ResourceName]map[string]replicas.Sample
}

// ContainerResourceMetric returns the usage of resource (cpu or memory) by container in every pod
// of namespace that lists the container with it, keyed by pod name; a pod whose metrics lack the
// container has no sample and counts as missing, as upstream's getContainerMetrics (1.36) has it.
// It reads the same pod metrics list as ResourceMetric (one list per namespace within the
// freshness period) and derives each container's view once per namespace and container. The map
// is shared with other callers and must not be modified.
func (f *Fetcher) ContainerResourceMetric(ctx context.Context, namespace string, resource corev1.ResourceName, container string) (map[string]replicas.Sample, error) {
	if f.resource == nil {
		return nil, fmt.Errorf("get resource metric %s of container %s in namespace %s: %w", resource, container, namespace, ErrNoSource)
	}
	f.counter.Requested(SourceResource)
	cu, err := f.containers.get(ctx, containerKey{namespace: namespace, container: container}, func(ctx context.Context) (containerUsage, error) {
		usage, err := f.usages.get(ctx, namespace, func(ctx context.Context) (podUsage, error) {
			f.counter.Called(SourceResource)
			return fetchUsage(ctx, f.resource, namespace)
		})
		if err != nil {
			return containerUsage{}, err
		}
		return containerView(usage, container), nil
	})
	if err != nil {
		return nil, fmt.Errorf("get resource metric %s of container %s in namespace %s: %w", resource, container, namespace, err)
	}
	return cu.samples[resource], nil
}

// containerView picks container out of each pod's metrics, in milli-units, as upstream's
// getContainerMetrics: a pod whose container lacks a resource, or that lacks the container, has
// no sample of it. A usage beyond int64 milli-units or below zero is the sample's Err.
func containerView(usage podUsage, container string) containerUsage {
	out := containerUsage{samples: make(map[corev1.ResourceName]map[string]replicas.Sample, len(usageResources))}
	for _, r := range usageResources {
		out.samples[r] = map[string]replicas.Sample{}
	}
	for _, pm := range usage.items {
		for _, c := range pm.Containers {
			if c.Name != container {
				continue
			}
			for _, r := range usageResources {
				if q, ok := c.Usage[r]; ok {
					s := replicas.Sample{Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration}
					s.Value, s.Err = replicas.MilliOf(q)
					out.samples[r][pm.Name] = s
				}
			}
			break
		}
	}
	return out
}
