package replicas

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// resized marks the pods named by index as being resized in place.
func resized(pods []Pod, indexes ...int) []Pod {
	for _, i := range indexes {
		pods[i].Resizing = true
	}
	return pods
}

// TestAResizeInProgressNeverScalesIn checks the rule for pods whose in-place resize is in flight
// (pending, Deferred, Infeasible or in progress; kubernetes#142155): their requests are the ones in
// effect (the controller reads them), and on a scale-down of a Utilization target they count as
// using 100% of that request (the target if above 100%), as upstream counts a pod without a
// sample, whatever their samples say. So they can hold or raise a proposal, never lower it: a
// scale-in comes only from the other pods.
func TestAResizeInProgressNeverScalesIn(t *testing.T) {
	cpu60 := Target{Type: Utilization, Resource: corev1.ResourceCPU, Utilization: 60}
	tests := []struct {
		name    string
		current int32
		target  Target
		pods    []Pod
		samples map[string]Sample
		want    int32
	}{
		{name: "every pod being resized, low usage: the replicas hold (without the rule 1)",
			current: 2, target: cpu60, pods: resized(podsWithRequests(1000, 1000), 0, 1), samples: samplesOf(100, 100), want: 2},
		{name: "the resized pod's low sample alone would scale in: the replicas hold (without the rule 3)",
			current: 4, target: cpu60, pods: resized(podsWithRequests(1000, 1000, 1000, 1000), 0), samples: samplesOf(0, 600, 600, 600), want: 4},
		{name: "the other pods' low usage still scales in, only as far as they take it (without the rule 1)",
			current: 4, target: cpu60, pods: resized(podsWithRequests(1000, 1000, 1000, 1000), 0), samples: samplesOf(600, 0, 0, 0), want: 2},
		{name: "a target above 100% counts the resized pod at the target",
			current: 2, target: Target{Type: Utilization, Resource: corev1.ResourceCPU, Utilization: 150},
			pods: resized(podsWithRequests(1000, 1000), 0), samples: samplesOf(0, 1500), want: 2},
		{name: "on a scale-up the resized pod counts as measured against its requests in effect",
			current: 2, target: cpu60, pods: resized(podsWithRequests(500, 1000), 0), samples: samplesOf(450, 900), want: 3},
		{name: "a ContainerResource target holds the same way (without the rule 1)",
			current: 2, target: appCPU(60), pods: resized(withContainers(podsWithRequests(1, 1), 1000), 0, 1), samples: samplesOf(100, 100), want: 2},
		{name: "an AverageValue target divides by no request: a resize changes nothing, it scales in",
			current: 4, target: Target{Type: AverageValue, Resource: corev1.ResourceCPU, AverageValue: 600},
			pods: resized(podsWithRequests(1000, 1000, 1000, 1000), 0), samples: samplesOf(0, 600, 600, 600), want: 3},
		{name: "without a resize in flight the same usage scales in",
			current: 4, target: cpu60, pods: podsWithRequests(1000, 1000, 1000, 1000), samples: samplesOf(0, 600, 600, 600), want: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Calculate(Input{CurrentReplicas: tt.current, Target: tt.target, Pods: tt.pods, Samples: tt.samples, Config: DefaultConfig(), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if got.Replicas != tt.want {
				t.Errorf("replicas = %d, want %d", got.Replicas, tt.want)
			}
		})
	}
}
