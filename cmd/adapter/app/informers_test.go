package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/podcache"
	"github.com/podpilot/podpilot/pkg/podcache/podcachetest"
)

func TestTheTypedTransformCachesPodsCompact(t *testing.T) {
	in := podcachetest.FullPod()
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
	rs := &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](3), Template: podcachetest.FullPodTemplate()},
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
