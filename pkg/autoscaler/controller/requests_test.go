package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/podcache"
)

func TestRequestsCountNativeSidecarsAsUpstream(t *testing.T) {
	cpu := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
	}
	app := corev1.Container{Name: "app", Resources: cpu("400m")}
	sidecar := corev1.Container{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: cpu("100m")}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want map[corev1.ResourceName]int64
	}{
		{name: "a restartable init container (native sidecar) adds its request to the containers'",
			spec: corev1.PodSpec{InitContainers: []corev1.Container{sidecar}, Containers: []corev1.Container{app}},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}},
		{name: "an init container that runs to completion does not count",
			spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "migrate", Resources: cpu("2")}}, Containers: []corev1.Container{app}},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 400}},
		{name: "a native sidecar without a request leaves the resource out",
			spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
				Containers: []corev1.Container{app}},
			want: map[corev1.ResourceName]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := requestsOf(&corev1.Pod{Spec: tt.spec})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if errs != nil {
				t.Errorf("errors = %v, want none", errs)
			}
		})
	}
}

func TestARequestBeyondMilliUnitsFailsTheUtilizationMetricInsteadOfReadingWrapped(t *testing.T) {
	huge := resource.MustParse("10P") // 1e16 units: beyond int64 milli-units (about 9.2e15)
	sevenP := resource.MustParse("7P")
	cpu := func(q resource.Quantity) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q}}
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
	}{
		{name: "a pod-level request beyond int64 milli-units is an error",
			spec: corev1.PodSpec{Resources: ptr.To(cpu(huge)), Containers: []corev1.Container{{Name: "app", Resources: cpu(resource.MustParse("1"))}}}},
		{name: "a container's request beyond int64 milli-units is an error",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: cpu(huge)}}}},
		{name: "containers' requests that sum beyond int64 milli-units are an error",
			spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Resources: cpu(sevenP)}, {Name: "b", Resources: cpu(sevenP)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, errs := requestsOf(&corev1.Pod{Spec: tt.spec})
			if _, ok := got[corev1.ResourceCPU]; ok {
				t.Errorf("cpu request = %d, want it absent", got[corev1.ResourceCPU])
			}
			if !errors.Is(errs[corev1.ResourceCPU], replicas.ErrValueOutOfRange) {
				t.Fatalf("cpu error = %v, want %v", errs[corev1.ResourceCPU], replicas.ErrValueOutOfRange)
			}
			hourAgo := metav1.NewTime(now.Add(-time.Hour))
			pod := podOf(&podcache.Pod{Name: "p", Phase: corev1.PodRunning, Ready: true, StartTime: hourAgo, ReadyTransition: hourAgo, Resources: &corev1.Pod{Spec: tt.spec}})
			target := replicas.Target{Type: replicas.Utilization, Resource: corev1.ResourceCPU, Utilization: 50}
			_, err := replicas.Calculate(replicas.Input{CurrentReplicas: 1, Target: target, Pods: []replicas.Pod{pod},
				Samples: map[string]replicas.Sample{"p": {Value: 100, Timestamp: now}}, Config: replicas.DefaultConfig(), Now: now})
			if !errors.Is(err, replicas.ErrValueOutOfRange) {
				t.Errorf("utilization metric error = %v, want %v (the metric fails and holds)", err, replicas.ErrValueOutOfRange)
			}
		})
	}
}

// TestPodLevelRequestsAreTheUtilizationDenominatorWithoutTheOverhead checks pod-level requests
// (spec.resources, kubernetes#132430) against upstream's calculateRequests: a pod-level request is
// the pod's request for a Resource metric, its containers' are not summed; a ContainerResource
// metric reads its container's own request even then; and the pod overhead (spec.overhead, a
// RuntimeClass's) is never part of the request, as kubernetes#142154 made it upstream
// (kube-controller-manager 1.37.2 still adds it to a pod-level request).
func TestPodLevelRequestsAreTheUtilizationDenominatorWithoutTheOverhead(t *testing.T) {
	list := func(cpu, memory string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if memory != "" {
			l[corev1.ResourceMemory] = resource.MustParse(memory)
		}
		return l
	}
	containers := []corev1.Container{
		{Name: "app", Resources: corev1.ResourceRequirements{Requests: list("300m", "100")}},
		{Name: "log", Resources: corev1.ResourceRequirements{Requests: list("100m", "50")}},
	}
	tests := []struct {
		name           string
		spec           corev1.PodSpec
		want           map[corev1.ResourceName]int64
		wantAppRequest int64
	}{
		{name: "a pod-level request is the pod's request; the containers' are not summed",
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: list("1", "1000")}, Containers: containers},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000, corev1.ResourceMemory: 1_000_000}, wantAppRequest: 300},
		{name: "the overhead is not added to a pod-level request (1.37.2 reads 1250m)",
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: list("1", "1000")}, Containers: containers, Overhead: list("250m", "20")},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000, corev1.ResourceMemory: 1_000_000}, wantAppRequest: 300},
		{name: "the overhead is not added to the containers' sum either (as upstream, every version)",
			spec: corev1.PodSpec{Containers: containers, Overhead: list("250m", "20")},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 400, corev1.ResourceMemory: 150_000}, wantAppRequest: 300},
		{name: "a resource without a pod-level request is the containers' sum",
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: list("1", "")}, Containers: containers},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1000, corev1.ResourceMemory: 150_000}, wantAppRequest: 300},
		{name: "pod-level requests without container requests: the pod-level ones; a ContainerResource target finds none",
			spec: corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: list("500m", "")}, Containers: []corev1.Container{{Name: "app"}}},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}, wantAppRequest: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c podcache.Compactor
			pod := podOf(c.Compact(&corev1.Pod{Spec: tt.spec}))
			if diff := cmp.Diff(tt.want, pod.Requests); diff != "" {
				t.Errorf("pod requests (-want +got):\n%s", diff)
			}
			if got := pod.ContainerRequests["app"][corev1.ResourceCPU]; got != tt.wantAppRequest {
				t.Errorf("container app's cpu request = %dm, want %dm", got, tt.wantAppRequest)
			}
		})
	}
}
