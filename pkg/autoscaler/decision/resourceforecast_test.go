package decision

import (
	"math"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// TestAResourceForecastIsTheTotalUsageOverThePerPodTarget checks forecastReplicas on cpu and
// memory loads, which the controller hands in as the total usage over the target's pods in
// milli-units (cores × 1000, bytes × 1000): replicas = ceil(load ÷ the per-pod target), the
// target being the AverageValue, or for Utilization the mean request (of the container, for a
// ContainerResource metric) × utilization.
func TestAResourceForecastIsTheTotalUsageOverThePerPodTarget(t *testing.T) {
	cpu, memory := corev1.ResourceCPU, corev1.ResourceMemory
	withContainer := func(pods []replicas.Pod, container string, cpuMilli int64) []replicas.Pod {
		for i := range pods {
			pods[i].ContainerRequests = map[string]map[corev1.ResourceName]int64{container: {cpu: cpuMilli}, "other": {cpu: 500 - cpuMilli}}
		}
		return pods
	}
	mixed := seedPods(3)
	mixed[1].Requests = map[corev1.ResourceName]int64{cpu: 1000} // 500m, 1000m, 500m: mean 666.7m
	delete(mixed[2].Requests, memory)
	tests := []struct {
		name   string
		pods   []replicas.Pod
		target replicas.Target
		load   float64
		want   int32
		ok     bool
	}{{
		name:   "cpu AverageValue: 2.25 cores over 250m a pod → 9",
		pods:   seedPods(2),
		target: replicas.Target{Type: replicas.AverageValue, Resource: cpu, AverageValue: 250},
		load:   2250, want: 9, ok: true,
	}, {
		name:   "memory AverageValue: 9 × 256Mi in bytes over 256Mi a pod → 9",
		pods:   seedPods(2),
		target: replicas.Target{Type: replicas.AverageValue, Resource: memory, AverageValue: 256 * mi * 1000},
		load:   float64(9 * 256 * mi * 1000), want: 9, ok: true,
	}, {
		name:   "cpu Utilization: 2.25 cores over 50% of the 500m mean request → 9",
		pods:   seedPods(2),
		target: replicas.Target{Type: replicas.Utilization, Resource: cpu, Utilization: 50},
		load:   2250, want: 9, ok: true,
	}, {
		name:   "memory Utilization: 3 × 512Mi over 80% of the 512Mi request → 3.75, rounded up to 4",
		pods:   seedPods(2),
		target: replicas.Target{Type: replicas.Utilization, Resource: memory, Utilization: 80},
		load:   float64(3 * 512 * mi * 1000), want: 4, ok: true,
	}, {
		name:   "Utilization's request is the mean over the current pods: 1.9 cores over 50% of 666.7m → 5.7, rounded up to 6",
		pods:   mixed,
		target: replicas.Target{Type: replicas.Utilization, Resource: cpu, Utilization: 50},
		load:   1900, want: 6, ok: true,
	}, {
		name:   "pods without the request count out of the mean: 1Gi over 100% of the two pods' 512Mi → 2",
		pods:   mixed,
		target: replicas.Target{Type: replicas.Utilization, Resource: memory, Utilization: 100},
		load:   float64(1024 * mi * 1000), want: 2, ok: true,
	}, {
		name:   "ContainerResource Utilization reads the container's request, not the pod's: 1 core over 50% of 200m → 10",
		pods:   withContainer(seedPods(2), "app", 200),
		target: replicas.Target{Type: replicas.Utilization, Resource: cpu, Container: "app", Utilization: 50},
		load:   1000, want: 10, ok: true,
	}, {
		name:   "an exact count is not rounded up by floating point: 2 cores over 50% of 666.7m → 6, not 7",
		pods:   mixed,
		target: replicas.Target{Type: replicas.Utilization, Resource: cpu, Utilization: 50},
		load:   2000, want: 6, ok: true,
	}, {
		name:   "no pod has the request: no forecast, never a guess",
		pods:   withContainer(seedPods(2), "app", 200),
		target: replicas.Target{Type: replicas.Utilization, Resource: cpu, Container: "sidecar", Utilization: 50},
		load:   1000,
	}, {
		name:   "a NaN load (no forecast for the metric) proposes nothing",
		pods:   seedPods(2),
		target: replicas.Target{Type: replicas.Utilization, Resource: cpu, Utilization: 50},
		load:   math.NaN(),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := forecastReplicas(Input{SpecReplicas: int32(len(tc.pods)), Pods: tc.pods}, tc.target, tc.load)
			if got != tc.want || ok != tc.ok {
				t.Errorf("forecastReplicas = %d, %t; want %d, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}
