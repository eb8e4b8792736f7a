package v1alpha1

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

func TestScaleTargetKind(t *testing.T) {
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	statefulSets := schema.GroupResource{Group: "apps", Resource: "statefulsets"}
	tests := []struct {
		name      string
		kind      ScaleTargetKind
		wantGR    schema.GroupResource
		wantRef   string
		wantError error
	}{
		{name: "the seed's lower-case deployment names apps deployments", kind: "deployment", wantGR: deployments, wantRef: "Deployment/web"},
		{name: "the kind is case-insensitive: Deployment", kind: "Deployment", wantGR: deployments, wantRef: "Deployment/web"},
		{name: "the kind is case-insensitive: STATEFULSET", kind: "STATEFULSET", wantGR: statefulSets, wantRef: "StatefulSet/web"},
		{name: "statefulset names apps statefulsets", kind: "statefulset", wantGR: statefulSets, wantRef: "StatefulSet/web"},
		{name: "a ReplicaSet is not supported", kind: "replicaset", wantError: ErrUnsupportedScaleTargetKind},
		{name: "an empty kind is not supported", kind: "", wantError: ErrUnsupportedScaleTargetKind},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pa := &PodAutoscaler{
				ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pa"},
				Spec:       PodAutoscalerSpec{ScaleTargetKind: tc.kind, ScaleTargetName: "web"},
			}
			gr, err := pa.Spec.ScaleTargetKind.GroupResource()
			if !errors.Is(err, tc.wantError) {
				t.Fatalf("GroupResource error = %v, want %v", err, tc.wantError)
			}
			if diff := cmp.Diff(tc.wantGR, gr); diff != "" {
				t.Errorf("GroupResource (-want +got):\n%s", diff)
			}
			ref, err := pa.TargetReference()
			if !errors.Is(err, tc.wantError) {
				t.Fatalf("TargetReference error = %v, want %v", err, tc.wantError)
			}
			if ref != tc.wantRef {
				t.Errorf("TargetReference = %q, want %q", ref, tc.wantRef)
			}
		})
	}
}

func TestMinReplicasOrDefault(t *testing.T) {
	tests := []struct {
		name string
		min  *int32
		want int32
	}{
		{name: "unset minReplicas defaults to 1, as the CRD schema does", min: nil, want: 1},
		{name: "a set minReplicas is kept", min: ptr.To[int32](3), want: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := PodAutoscalerSpec{MinReplicas: tc.min}
			if got := s.MinReplicasOrDefault(); got != tc.want {
				t.Errorf("MinReplicasOrDefault = %d, want %d", got, tc.want)
			}
		})
	}
}
