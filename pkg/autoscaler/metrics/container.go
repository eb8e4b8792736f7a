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
// whose metrics list the container with that resource, and the pods whose metrics do not list the
// container at all.
type containerUsage struct {
	samples     map[corev1.ResourceName]map[string]replicas.Sample
	noContainer map[string]bool
}

// ContainerSamples is one container's usage of one resource in a namespace.
type ContainerSamples struct {
	// Samples are the container's usage by pod name, for the pods whose metrics list the
	// container with the resource.
	Samples map[string]replicas.Sample
	// NoContainer names the pods whose metrics were listed without the container at all.
	NoContainer map[string]bool
}

// ContainerResourceMetric returns the usage of resource (cpu or memory) by container in every pod
// of namespace. It reads the same pod metrics list as ResourceMetric (one list per namespace within
// the freshness period) and derives each container's view once per namespace and container. The
// maps are shared with other callers and must not be modified.
func (f *Fetcher) ContainerResourceMetric(ctx context.Context, namespace string, resource corev1.ResourceName, container string) (ContainerSamples, error) {
	if f.resource == nil {
		return ContainerSamples{}, fmt.Errorf("get resource metric %s of container %s in namespace %s: %w", resource, container, namespace, ErrNoSource)
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
		return ContainerSamples{}, fmt.Errorf("get resource metric %s of container %s in namespace %s: %w", resource, container, namespace, err)
	}
	return ContainerSamples{Samples: cu.samples[resource], NoContainer: cu.noContainer}, nil
}

// containerView picks container out of each pod's metrics, in milli-units, as upstream's
// getContainerMetrics: a pod whose container lacks a resource has no sample of it.
func containerView(usage podUsage, container string) containerUsage {
	out := containerUsage{samples: make(map[corev1.ResourceName]map[string]replicas.Sample, len(usageResources)), noContainer: map[string]bool{}}
	for _, r := range usageResources {
		out.samples[r] = map[string]replicas.Sample{}
	}
	for _, pm := range usage.items {
		found := false
		for _, c := range pm.Containers {
			if c.Name != container {
				continue
			}
			found = true
			for _, r := range usageResources {
				if q, ok := c.Usage[r]; ok {
					out.samples[r][pm.Name] = replicas.Sample{Value: q.MilliValue(), Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration}
				}
			}
			break
		}
		if !found {
			out.noContainer[pm.Name] = true
		}
	}
	return out
}
