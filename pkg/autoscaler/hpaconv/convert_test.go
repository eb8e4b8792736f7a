package hpaconv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// TestConvertTargetAndBounds: the scale target is an apps/v1 Deployment or StatefulSet, the
// bounds are carried over as written, and the object keeps the HPA's namespace and name.
func TestConvertTargetAndBounds(t *testing.T) {
	cpu := resourceMetric(corev1.ResourceCPU, utilization(50))
	tests := []struct {
		name     string
		mutate   func(*autoscalingv2.HorizontalPodAutoscaler)
		wantKind podpilotv1alpha1.ScaleTargetKind
		wantMin  *int32
		refused  []string
	}{
		{name: "an apps/v1 Deployment becomes scaleTargetKind deployment", mutate: func(*autoscalingv2.HorizontalPodAutoscaler) {},
			wantKind: podpilotv1alpha1.ScaleTargetDeployment, wantMin: ptr(int32(2))},
		{name: "an apps/v1 StatefulSet becomes scaleTargetKind statefulset",
			mutate:   func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Kind = "StatefulSet" },
			wantKind: podpilotv1alpha1.ScaleTargetStatefulSet, wantMin: ptr(int32(2))},
		{name: "an unset minReplicas stays unset (both default to 1)",
			mutate:   func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.MinReplicas = nil },
			wantKind: podpilotv1alpha1.ScaleTargetDeployment},
		{name: "a ReplicaSet target is refused naming the kind",
			mutate:  func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.Kind = "ReplicaSet" },
			refused: []string{"spec.scaleTargetRef.kind"}},
		{name: "a custom resource with a scale subresource is refused naming the apiVersion",
			mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.ScaleTargetRef.APIVersion, h.Spec.ScaleTargetRef.Kind = "argoproj.io/v1alpha1", "Rollout"
			},
			refused: []string{"spec.scaleTargetRef.apiVersion"}},
		{name: "a Deployment of another apps version is refused naming the apiVersion",
			mutate:  func(h *autoscalingv2.HorizontalPodAutoscaler) { h.Spec.ScaleTargetRef.APIVersion = "apps/v1beta2" },
			refused: []string{"spec.scaleTargetRef.apiVersion"}},
		{name: "every refusal of one HPA is listed, in the order of the spec",
			mutate: func(h *autoscalingv2.HorizontalPodAutoscaler) {
				h.Spec.ScaleTargetRef.Kind = "ReplicaSet"
				h.Spec.Metrics = append(h.Spec.Metrics, podsMetric("rps", nil, value("1")))
			},
			refused: []string{"spec.scaleTargetRef.kind", "spec.metrics[1].pods.target.type"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := hpa(cpu)
			tc.mutate(h)
			pa, err := Convert(h, ptr(UpstreamDefaults()))
			if tc.refused != nil {
				if diff := cmp.Diff(tc.refused, refusedFields(t, err)); diff != "" {
					t.Errorf("refused fields (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			want := metav1.ObjectMeta{Name: "web", Namespace: "shop", Annotations: map[string]string{MigratedFromAnnotation: "web"}}
			if diff := cmp.Diff(want, pa.ObjectMeta); diff != "" {
				t.Errorf("metadata (-want +got):\n%s", diff)
			}
			got := []any{pa.Kind, pa.APIVersion, pa.Spec.ScaleTargetKind, pa.Spec.ScaleTargetName, pa.Spec.MinReplicas, pa.Spec.MaxReplicas, pa.Spec.DryRun}
			if diff := cmp.Diff([]any{"PodAutoscaler", "autoscaling.podpilot.io/v1alpha1", tc.wantKind, "web", tc.wantMin, int32(10), false}, got); diff != "" {
				t.Errorf("kind, apiVersion, target, bounds, dryRun (-want +got):\n%s", diff)
			}
		})
	}
}

// TestConvertHPAWithoutMetricsTakesTheAPIDefault: autoscaling/v2 defaults an HPA without metrics
// (as a file may have it) to cpu at 80% utilization, which the PodAutoscaler then says explicitly.
func TestConvertHPAWithoutMetricsTakesTheAPIDefault(t *testing.T) {
	pa, err := Convert(hpa(), ptr(UpstreamDefaults()))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	want := []podpilotv1alpha1.ResourceMetricSpec{{ResourceName: corev1.ResourceCPU, TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr(int32(80))}}
	if diff := cmp.Diff(want, pa.Spec.ResourceMetrics); diff != "" {
		t.Errorf("resourceMetrics (-want +got):\n%s", diff)
	}
}

// TestConvertDoesNotShareMemoryWithTheHPA: changing the HPA after the conversion leaves the
// PodAutoscaler as it was.
func TestConvertDoesNotShareMemoryWithTheHPA(t *testing.T) {
	h := hpa(externalMetric("q", sel.DeepCopy(), value("5")), resourceMetric(corev1.ResourceCPU, utilization(50)))
	h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr(int32(30))}}
	pa, err := Convert(h, ptr(UpstreamDefaults()))
	if err != nil {
		t.Fatalf("Convert: %v", err)
	}
	before := pa.DeepCopy()
	*h.Spec.MinReplicas = 7
	*h.Spec.Metrics[0].External.Target.Value = *qty("9")
	h.Spec.Metrics[0].External.Metric.Selector.MatchExpressions[0].Values[0] = "changed"
	*h.Spec.Metrics[1].Resource.Target.AverageUtilization = 99
	*h.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = 99
	if diff := cmp.Diff(before, pa); diff != "" {
		t.Errorf("PodAutoscaler changed with the HPA (-before +after):\n%s", diff)
	}
}
