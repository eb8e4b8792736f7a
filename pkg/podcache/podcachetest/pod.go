package podcachetest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// FullPod returns a new, fully populated pod ns/p1 of the ReplicaSet vg1-abc: labels app=vg1,
// annotations, managed fields, a deletion timestamp, pod-level and container requests, a pod
// overhead, a restartable init container (sidecar), a probe, volumes, a node, a Ready status,
// and the requests in effect the kubelet reports (equal to the spec's: no resize). Every call
// returns fresh maps and slices, so a test may change one pod without touching another.
func FullPod() *corev1.Pod {
	now := metav1.Now()
	always := corev1.ContainerRestartPolicyAlways
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p1", Namespace: "ns", UID: "u1", ResourceVersion: "7", GenerateName: "p",
			Labels:            map[string]string{"app": "vg1"},
			Annotations:       map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{...}"},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "vg1-abc", UID: "rs1", Controller: ptr.To(true)}},
			DeletionTimestamp: &now,
		},
		Spec: corev1.PodSpec{
			Resources: &corev1.ResourceRequirements{Requests: req},
			Containers: []corev1.Container{{
				Name: "app", Image: "vanguard:1", Env: []corev1.EnvVar{{Name: "A", Value: "b"}},
				Resources:      corev1.ResourceRequirements{Requests: req, Limits: req},
				ReadinessProbe: &corev1.Probe{PeriodSeconds: 10},
			}},
			InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: req}}},
			Volumes:        []corev1.Volume{{Name: "data"}},
			Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
			NodeName:       "n1",
		},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			StartTime: &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now, Message: "long text"},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 2, AllocatedResources: req,
				Resources: &corev1.ResourceRequirements{Requests: req, Limits: req}}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "proxy", Resources: &corev1.ResourceRequirements{Requests: req}}},
			Resources:             &corev1.ResourceRequirements{Requests: req},
			QOSClass:              corev1.PodQOSBurstable,
		},
	}
}

// FullPodTemplate returns FullPod's labels and spec as a pod template.
func FullPodTemplate() corev1.PodTemplateSpec {
	p := FullPod()
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: p.Spec}
}
