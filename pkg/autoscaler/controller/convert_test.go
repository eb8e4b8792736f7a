package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

func TestRequestsSumContainersAndAreAbsentWhenOneLacksThem(t *testing.T) {
	container := func(req corev1.ResourceList) corev1.Container {
		return corev1.Container{Resources: corev1.ResourceRequirements{Requests: req}}
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want map[corev1.ResourceName]int64
	}{
		{name: "requests of all containers are summed in milli-units",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Ki")}),
				container(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Ki")}),
			}},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 1250, corev1.ResourceMemory: 2048 * 1000}},
		{name: "a container without a memory request leaves memory out",
			spec: corev1.PodSpec{Containers: []corev1.Container{
				container(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Ki")}),
				container(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")}),
			}},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 500}},
		{name: "a pod-level request takes precedence over the containers'",
			spec: corev1.PodSpec{
				Resources:  &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}},
				Containers: []corev1.Container{container(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m")})},
			},
			want: map[corev1.ResourceName]int64{corev1.ResourceCPU: 2000}},
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

func TestNoBehaviorMeansTheLegacyNormalizationAndTheSpecStaysUndefaulted(t *testing.T) {
	pa := seedAutoscaler()
	if b := specconv.Behavior(pa.Spec.Behavior); b != nil {
		t.Errorf("behavior = %+v, want nil: without spec.behavior the downscale stabilization flag and the max(2×current, 4) scale-up limit apply", b)
	}
	if pa.Spec.Behavior != nil {
		t.Error("the spec was defaulted")
	}
}
