package hpaconv

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func ptr[T any](v T) *T { return &v }

func qty(s string) *resource.Quantity { return ptr(resource.MustParse(s)) }

// hpa returns an HPA of the Deployment web in namespace shop with the given metrics.
func hpa(metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr(int32(2)), MaxReplicas: 10,
			Metrics: metrics,
		},
	}
}

func utilization(u int32) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &u}
}

func value(s string) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: qty(s)}
}

func averageValue(s string) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qty(s)}
}

func resourceMetric(name corev1.ResourceName, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: name, Target: t}}
}

func containerMetric(name corev1.ResourceName, container string, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType,
		ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: name, Container: container, Target: t}}
}

func podsMetric(name string, sel *metav1.LabelSelector, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: name, Selector: sel}, Target: t}}
}

func objectMetric(name string, sel *metav1.LabelSelector, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "web"},
		Metric:          autoscalingv2.MetricIdentifier{Name: name, Selector: sel}, Target: t,
	}}
}

func externalMetric(name string, sel *metav1.LabelSelector, t autoscalingv2.MetricTarget) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType,
		External: &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: name, Selector: sel}, Target: t}}
}
