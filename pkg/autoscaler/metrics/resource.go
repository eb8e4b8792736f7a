package metrics

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// podUsage is the pod metrics of one namespace: each resource's per-pod samples, summed over the
// containers, and the list they came from, for the per-container views.
type podUsage struct {
	pods  map[corev1.ResourceName]map[string]replicas.Sample
	items []metricsv1beta1.PodMetrics
}

// usageResources are the resources podUsage holds.
var usageResources = [...]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}

// fetchUsage lists the pod metrics of namespace once for every resource.
func fetchUsage(ctx context.Context, src ResourceSource, namespace string) (podUsage, error) {
	list, err := src.ListPodMetrics(ctx, namespace)
	if err != nil {
		return podUsage{}, err
	}
	var items []metricsv1beta1.PodMetrics
	if list != nil {
		items = list.Items
	}
	out := podUsage{pods: make(map[corev1.ResourceName]map[string]replicas.Sample, len(usageResources)), items: items}
	for _, r := range usageResources {
		out.pods[r] = resourceSamples(items, r)
	}
	return out, nil
}

// resourceSamples sums each pod's container usage of resource in milli-units. As upstream, a
// pod with a container lacking the resource is left out (a missing pod) rather than undercounted.
func resourceSamples(items []metricsv1beta1.PodMetrics, resource corev1.ResourceName) map[string]replicas.Sample {
	out := make(map[string]replicas.Sample, len(items))
	for _, pm := range items {
		if s, ok := podSample(pm, resource); ok {
			out[pm.Name] = s
		}
	}
	return out
}

// podSample sums the pod's container usage of resource; false when a container lacks it, or
// there is none. A usage beyond int64 milli-units or below zero, or a sum beyond int64, is the
// sample's Err, where upstream's MilliValue would read 0 or its sum wrap.
func podSample(pm metricsv1beta1.PodMetrics, resource corev1.ResourceName) (replicas.Sample, bool) {
	s := replicas.Sample{Timestamp: pm.Timestamp.Time, Window: pm.Window.Duration}
	for _, c := range pm.Containers {
		q, ok := c.Usage[resource]
		if !ok {
			return replicas.Sample{}, false
		}
		v, err := replicas.MilliOf(q)
		if err == nil && v > math.MaxInt64-s.Value {
			err = fmt.Errorf("sum over containers: %w", replicas.ErrValueOutOfRange)
		}
		if err != nil && s.Err == nil {
			s.Err = fmt.Errorf("container %s: %w", c.Name, err)
		}
		if s.Err == nil {
			s.Value += v
		}
	}
	return s, len(pm.Containers) > 0
}
