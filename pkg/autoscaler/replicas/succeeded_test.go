package replicas

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// succeeded returns p in phase Succeeded, with no sample and, unless keepRequest, no request.
func succeeded(p Pod, keepRequest bool) Pod {
	p.Phase = corev1.PodSucceeded
	if !keepRequest {
		p.Requests = nil
	}
	return p
}

// TestSucceededPodsAreNotCounted checks kubernetes#141302 (merged after 1.37.2, whose groupPods
// still counts a Succeeded pod as missing): a Succeeded pod (e.g. evicted under node pressure,
// kubernetes#118310) takes no part in any path of the calculation: it is neither missing (counted at
// its request on a scale-down, at 0 on a scale-up) nor ready, its request is not read, and it is
// not among the ready pods a Value target scales.
func TestSucceededPodsAreNotCounted(t *testing.T) {
	cpu50 := Target{Type: Utilization, Resource: corev1.ResourceCPU, Utilization: 50}
	perPod := []struct {
		name    string
		current int32
		target  Target
		pods    []Pod
		samples map[string]Sample
		want    int32
	}{
		{name: "a scale-down is not damped by Succeeded pods (1.37.2 counts them missing, at 100%: 4)",
			current: 4, target: cpu50, pods: append(podsWithRequests(1000, 1000), succeeded(runningPod("done-0", 1000), true), succeeded(runningPod("done-1", 1000), true)),
			samples: samplesOf(100, 100), want: 1},
		{name: "a scale-up is not damped by Succeeded pods (1.37.2 counts them missing, at 0: 2)",
			current: 2, target: cpu50, pods: append(podsWithRequests(1000, 1000), succeeded(runningPod("done-0", 1000), true), succeeded(runningPod("done-1", 1000), true)),
			samples: samplesOf(1000, 1000), want: 4},
		{name: "a Succeeded pod without a request does not fail a Utilization metric",
			current: 2, target: cpu50, pods: append(podsWithRequests(1000, 1000), succeeded(runningPod("done-0", 0), false)),
			samples: samplesOf(500, 500), want: 2},
		{name: "an AverageValue Pods metric ignores Succeeded pods",
			current: 2, target: Target{Type: AverageValue, AverageValue: 100}, pods: append(podsWithRequests(1, 1), succeeded(runningPod("done-0", 1), false)),
			samples: samplesOf(50, 50), want: 1},
	}
	for _, tt := range perPod {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Calculate(Input{CurrentReplicas: tt.current, Target: tt.target, Pods: tt.pods, Samples: tt.samples, Config: DefaultConfig(), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if got.Replicas != tt.want || got.Missing != 0 {
				t.Errorf("replicas = %d, missing %d; want %d, none missing", got.Replicas, got.Missing, tt.want)
			}
		})
	}
	t.Run("a Value target scales the running and ready pods, never a Succeeded one", func(t *testing.T) {
		// Upstream's getReadyPodsCount counts Running and Ready pods only, in every version.
		done := succeeded(runningPod("done-0", 1), false)
		done.Ready = true
		got, err := CalculateExternal(ExternalInput{SpecReplicas: 2, Target: Target{Type: Value, Value: 1000},
			Values: []int64{4000}, Pods: append(podsWithRequests(1, 1), done), Tolerances: DefaultConfig().Tolerances})
		if err != nil {
			t.Fatal(err)
		}
		if got.Replicas != 8 || got.Ready != 2 {
			t.Errorf("replicas %d from %d ready pods, want 8 from 2", got.Replicas, got.Ready)
		}
	})
}
