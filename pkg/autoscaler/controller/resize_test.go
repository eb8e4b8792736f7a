package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/podcache"
)

// TestUtilizationDividesByTheRequestsInEffectDuringAResize checks that the calculator's view of a
// pod carries the requests in effect: what the kubelet reports in the pod's status after an
// in-place resize (kubernetes#142155), the spec's where the status reports none, and whether a
// resize is in flight.
func TestUtilizationDividesByTheRequestsInEffectDuringAResize(t *testing.T) {
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
	reqs := func(q string) corev1.ResourceRequirements { return corev1.ResourceRequirements{Requests: cpu(q)} }
	status := func(name, q string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, Resources: ptr.To(reqs(q))}
	}
	// The spec says 2 cpu for app (resized from 500m) and 400m for the proxy sidecar.
	spec := corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: reqs("400m")}},
		Containers:     []corev1.Container{{Name: "app", Resources: reqs("2")}},
	}
	podLevel := corev1.PodSpec{Resources: ptr.To(reqs("2")), Containers: []corev1.Container{{Name: "app"}}}
	inProgress := corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}
	tests := []struct {
		name           string
		spec           corev1.PodSpec
		status         corev1.PodStatus
		wantCPU        int64
		wantContainers map[string]int64
		wantResizing   bool
	}{
		{name: "the requests the container statuses report are in effect, not the resized spec's",
			spec: spec, status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{status("app", "500m")},
				InitContainerStatuses: []corev1.ContainerStatus{status("proxy", "100m")}, Conditions: []corev1.PodCondition{inProgress}},
			wantCPU: 600, wantContainers: map[string]int64{"app": 500, "proxy": 100}, wantResizing: true},
		{name: "a container whose status reports no requests is read from the spec",
			spec: spec, status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{status("app", "500m")}},
			wantCPU: 900, wantContainers: map[string]int64{"app": 500, "proxy": 400}},
		{name: "without a status (a pending pod, an older kubelet) the spec's requests are in effect",
			spec: spec, wantCPU: 2400, wantContainers: map[string]int64{"app": 2000, "proxy": 400}},
		{name: "an infeasible resize is in flight; the requests in effect are the status's",
			spec: spec, status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{status("app", "500m")},
				InitContainerStatuses: []corev1.ContainerStatus{status("proxy", "400m")},
				Conditions:            []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: corev1.PodReasonInfeasible}}},
			wantCPU: 900, wantContainers: map[string]int64{"app": 500, "proxy": 400}, wantResizing: true},
		{name: "a deprecated status.resize from an older kubelet is a resize in flight",
			spec: spec, status: corev1.PodStatus{Resize: corev1.PodResizeStatusDeferred},
			wantCPU: 2400, wantContainers: map[string]int64{"app": 2000, "proxy": 400}, wantResizing: true},
		{name: "a resize condition that is False is no resize in flight",
			spec: spec, status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionFalse}}},
			wantCPU: 2400, wantContainers: map[string]int64{"app": 2000, "proxy": 400}},
		{name: "during a resize the pod-level request in effect is status.resources'",
			spec: podLevel, status: corev1.PodStatus{Resources: ptr.To(reqs("1")), Conditions: []corev1.PodCondition{inProgress}},
			wantCPU: 1000, wantContainers: map[string]int64{"app": 0}, wantResizing: true},
		{name: "at rest the pod-level request is the spec's (the status's is the pod cgroup's, rounded)",
			spec: podLevel, status: corev1.PodStatus{Resources: ptr.To(reqs("1950m"))},
			wantCPU: 2000, wantContainers: map[string]int64{"app": 0}},
		{name: "with an overhead the pod-level request is the spec's (the status's includes the overhead)",
			spec:    func() corev1.PodSpec { s := podLevel; s.Overhead = cpu("250m"); return s }(),
			status:  corev1.PodStatus{Resources: ptr.To(reqs("1250m")), Conditions: []corev1.PodCondition{inProgress}},
			wantCPU: 2000, wantContainers: map[string]int64{"app": 0}, wantResizing: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c podcache.Compactor
			pod := podOf(c.Compact(&corev1.Pod{Spec: tt.spec, Status: tt.status}))
			if got := pod.Requests[corev1.ResourceCPU]; got != tt.wantCPU {
				t.Errorf("pod cpu request = %dm, want %dm", got, tt.wantCPU)
			}
			got := map[string]int64{}
			for name, r := range pod.ContainerRequests {
				got[name] = r[corev1.ResourceCPU]
			}
			if diff := cmp.Diff(tt.wantContainers, got); diff != "" {
				t.Errorf("container cpu requests (-want +got):\n%s", diff)
			}
			if pod.Resizing != tt.wantResizing {
				t.Errorf("resizing = %v, want %v", pod.Resizing, tt.wantResizing)
			}
		})
	}
}
