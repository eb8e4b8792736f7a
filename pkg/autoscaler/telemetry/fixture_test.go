package telemetry

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
)

var now = autoscalertest.Now

// seedAutoscaler is the seed 000 example; mutate adapts it per case.
var seedAutoscaler = autoscalertest.Seed

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
