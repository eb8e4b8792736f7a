package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/podcache"
)

func fullPod() *corev1.Pod {
	now := metav1.Now()
	always := corev1.ContainerRestartPolicyAlways
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "p1", Namespace: "ns", UID: "u1", ResourceVersion: "7",
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
				Resources: corev1.ResourceRequirements{Requests: req, Limits: req},
			}},
			InitContainers: []corev1.Container{{Name: "proxy", RestartPolicy: &always, Resources: corev1.ResourceRequirements{Requests: req}}},
			Volumes:        []corev1.Volume{{Name: "data"}},
			NodeName:       "n1",
		},
		Status: corev1.PodStatus{
			Phase:     corev1.PodRunning,
			StartTime: &now,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now, Message: "long text"},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true}},
		},
	}
}

func TestTheTypedTransformCachesPodsCompact(t *testing.T) {
	in := fullPod()
	got, err := (&clusterInformers{}).stripTyped(in)
	if err != nil {
		t.Fatal(err)
	}
	var c podcache.Compactor
	if diff := cmp.Diff(c.Compact(in), got); diff != "" {
		t.Errorf("cached pod (-want +got):\n%s", diff)
	}
}

func TestStripReplicaSetAndHPAKeepOnlyWhatTheAutoscalerReads(t *testing.T) {
	owners := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "vg1", UID: "d1", Controller: ptr.To(true)}}
	meta := metav1.ObjectMeta{Name: "vg1-abc", Namespace: "ns", UID: "rs1", ResourceVersion: "4", OwnerReferences: owners,
		Labels: map[string]string{"app": "vg1"}, Annotations: map[string]string{"deployment.kubernetes.io/revision": "3"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager"}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: fullPodTemplate()},
		Status: appsv1.ReplicaSetStatus{Replicas: 3}}
	target := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "vg1"}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: meta, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: target, MaxReplicas: 5, Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType}}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 3}}
	tests := []struct {
		name    string
		in, out any
	}{
		{"a ReplicaSet keeps its name, namespace, UID and owners (Deployment → ReplicaSet → Pod)", rs,
			&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "vg1-abc", Namespace: "ns", UID: "rs1", ResourceVersion: "4", OwnerReferences: owners}}},
		{"an HPA keeps its name, namespace and scale target (the two-autoscalers rule)", hpa,
			&autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "vg1-abc", Namespace: "ns", UID: "rs1", ResourceVersion: "4"},
				Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: target}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clusterInformers{}
			got, err := c.stripTyped(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.out, got); diff != "" {
				t.Errorf("stripped (-want +got):\n%s", diff)
			}
			again, _ := c.stripTyped(got)
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("the transform is not idempotent (-once +twice):\n%s", diff)
			}
		})
	}
}

// fullPodTemplate is fullPod's spec as a template.
func fullPodTemplate() corev1.PodTemplateSpec {
	p := fullPod()
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: p.Labels}, Spec: p.Spec}
}

func TestStripMetadataKeepsNameNamespaceAndLabels(t *testing.T) {
	in := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "n1", Labels: map[string]string{"pool": "gpu"}, ResourceVersion: "3",
		Annotations:   map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
	}}
	got, err := stripMetadata(in)
	if err != nil {
		t.Fatal(err)
	}
	want := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: in.Labels, ResourceVersion: "3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripped metadata (-want +got):\n%s", diff)
	}
}
