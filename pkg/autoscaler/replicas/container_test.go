package replicas

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// withContainers gives each pod an "app" container requesting app and a "sidecar" requesting 1000m cpu.
func withContainers(pods []Pod, app int64) []Pod {
	for i := range pods {
		pods[i].ContainerRequests = map[string]map[corev1.ResourceName]int64{
			"app":     {corev1.ResourceCPU: app},
			"sidecar": {corev1.ResourceCPU: 1000},
		}
	}
	return pods
}

func appCPU(percent int32) Target {
	return Target{Type: Utilization, Resource: corev1.ResourceCPU, Container: "app", Utilization: percent}
}

func TestCalculateContainerResource(t *testing.T) {
	tests := []struct {
		name    string
		current int32
		target  Target
		pods    []Pod
		samples map[string]Sample
		want    Result
	}{{
		name:    "ContainerResource Utilization: only the container's request counts, not the pod's",
		current: 2, target: appCPU(50),
		pods: withContainers(podsWithRequests(1500, 1500), 500), samples: samplesOf(400, 400),
		want: Result{Replicas: 4, UsageRatio: 80.0 / 50.0, AverageValue: 400, Utilization: 80, Ready: 2, Timestamp: now},
	}, {
		name:    "ContainerResource AverageValue: the container's usage against the target per pod",
		current: 2, target: Target{Type: AverageValue, Resource: corev1.ResourceCPU, Container: "app", AverageValue: 200},
		pods: withContainers(podsWithRequests(1500, 1500), 500), samples: samplesOf(400, 400),
		want: Result{Replicas: 4, UsageRatio: 2, AverageValue: 400, Ready: 2, Timestamp: now},
	}, {
		name:    "ContainerResource: a pod whose metrics lack the container is missing, and on a scale-down counts at its request (upstream 1.36 getContainerMetrics)",
		current: 4, target: appCPU(50),
		pods: withContainers(podsWithRequests(1, 1, 1, 1), 500), samples: samplesOf(50, 50, 50),
		want: Result{Replicas: 3, UsageRatio: 10.0 / 50.0, AverageValue: 50, Utilization: 10, Ready: 3, Missing: 1, Timestamp: now},
	}, {
		name:    "ContainerResource: a pod whose metrics lack the container is missing, and on a scale-up counts as 0, which here keeps the replicas",
		current: 2, target: appCPU(50),
		pods: withContainers(podsWithRequests(1, 1), 500), samples: samplesOf(400),
		want: Result{Replicas: 2, UsageRatio: 80.0 / 50.0, AverageValue: 400, Utilization: 80, Ready: 1, Missing: 1, Timestamp: now},
	}, {
		name:    "ContainerResource: a failed pod whose metrics lack the container is discarded and never fails the metric",
		current: 2, target: appCPU(50),
		pods: func() []Pod {
			p := withContainers(podsWithRequests(1, 1, 1), 500)
			p[2].Phase = corev1.PodFailed
			return p
		}(), samples: samplesOf(250, 250),
		want: Result{Replicas: 2, UsageRatio: 1, AverageValue: 250, Utilization: 50, Ready: 2, Timestamp: now},
	}, {
		name:    "ContainerResource: a deleted pod whose metrics lack the container is discarded and never fails the metric",
		current: 2, target: appCPU(50),
		pods: func() []Pod {
			p := withContainers(podsWithRequests(1, 1, 1), 500)
			p[2].Deleted = true
			return p
		}(), samples: samplesOf(250, 250),
		want: Result{Replicas: 2, UsageRatio: 1, AverageValue: 250, Utilization: 50, Ready: 2, Timestamp: now},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Calculate(Input{CurrentReplicas: tc.current, Target: tc.target, Pods: tc.pods, Samples: tc.samples,
				Config: DefaultConfig(), Now: now})
			if err != nil {
				t.Fatalf("Calculate() error = %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Calculate() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalculateContainerResourceErrors(t *testing.T) {
	tests := []struct {
		name    string
		target  Target
		pods    []Pod
		samples map[string]Sample
		want    error
	}{{
		name:   "ContainerResource: when no target pod's metrics list the container, no metrics is ErrNoMetrics (upstream 1.36)",
		target: appCPU(50), pods: withContainers(podsWithRequests(1, 1), 500),
		samples: map[string]Sample{}, want: ErrNoMetrics,
	}, {
		name:   "ContainerResource Utilization: a container without a request fails the metric",
		target: appCPU(50),
		pods: func() []Pod {
			p := withContainers(podsWithRequests(1, 1), 500)
			p[0].ContainerRequests["app"] = map[corev1.ResourceName]int64{}
			return p
		}(),
		samples: samplesOf(250, 250), want: ErrMissingRequest,
	}, {
		name:   "ContainerResource: a live pod whose spec lacks the container fails the metric, as upstream 1.36's calculateRequests (container … not found in Pod …)",
		target: appCPU(50),
		pods: func() []Pod {
			p := withContainers(podsWithRequests(1, 1), 500)
			delete(p[1].ContainerRequests, "app")
			return p
		}(),
		samples: samplesOf(250, 250), want: ErrContainerNotFound,
	}, {
		name:   "ContainerResource: a pending pod whose spec lacks the container fails the metric too (every live pod's request is read)",
		target: appCPU(50),
		pods: func() []Pod {
			p := withContainers(podsWithRequests(1, 1, 1), 500)
			p[2].Phase = corev1.PodPending
			delete(p[2].ContainerRequests, "app")
			return p
		}(),
		samples: samplesOf(250, 250), want: ErrContainerNotFound,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Calculate(Input{CurrentReplicas: 2, Target: tc.target, Pods: tc.pods, Samples: tc.samples,
				Config: DefaultConfig(), Now: now})
			if !errors.Is(err, tc.want) {
				t.Errorf("Calculate() error = %v, want %v", err, tc.want)
			}
		})
	}
}
