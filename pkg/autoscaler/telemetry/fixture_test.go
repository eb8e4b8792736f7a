package telemetry

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

var now = time.Date(2025, 6, 16, 21, 0, 0, 0, time.UTC)

// seedAutoscaler is the seed 000 example (as the controller's tests have it): deployment
// vg1-vanguard, 1 to 5 replicas, qps averageValue 2000; mutate adapts it per case.
func seedAutoscaler(mutate ...func(*podpilotv1alpha1.PodAutoscaler)) *podpilotv1alpha1.PodAutoscaler {
	pa := &podpilotv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa-vg1-vanguard", Namespace: "dns", Generation: 1},
		Spec: podpilotv1alpha1.PodAutoscalerSpec{
			ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard",
			MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
			CustomMetrics: []podpilotv1alpha1.CustomMetricSpec{{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse("2000")}},
		},
	}
	for _, m := range mutate {
		m(pa)
	}
	return pa
}

// everyKind adds an Object, an External and a ContainerResource metric to the seed autoscaler.
func everyKind(pa *podpilotv1alpha1.PodAutoscaler) {
	pa.Spec.ObjectMetrics = []podpilotv1alpha1.ObjectMetricSpec{{
		DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"},
		MetricName:      "requests", TargetType: podpilotv1alpha1.ValueTarget, Value: ptr.To(resource.MustParse("10")),
	}}
	pa.Spec.ExternalMetrics = []podpilotv1alpha1.ExternalMetricSpec{{
		MetricName: "queue_length", TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse("1")),
	}}
	pa.Spec.ContainerResourceMetrics = []podpilotv1alpha1.ContainerResourceMetricSpec{{
		ResourceName: corev1.ResourceCPU, Container: "vanguard", TargetType: podpilotv1alpha1.UtilizationMetricType, AverageUtilization: ptr.To[int32](50),
	}}
}
