package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
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
			got, _ := requestsOf(&corev1.Pod{Spec: tt.spec})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}
