package framework

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PodsMetricHPA is a stock autoscaling/v2 HPA named name scaling Deployment
// name on the per-pod custom metric, with an AverageValue target of target;
// kube-controller-manager reads the metric through podpilot.
func PodsMetricHPA(name, metric string, target int64, minReplicas, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return HPA(name, minReplicas, maxReplicas, nil, PodsMetric(metric, target))
}

// HPA is a stock autoscaling/v2 HPA named name scaling Deployment name on
// metrics, with behavior (nil: the controller's classic normalization).
func HPA(name string, minReplicas, maxReplicas int32, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior,
	metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			MinReplicas:    &minReplicas,
			MaxReplicas:    maxReplicas,
			Metrics:        metrics,
			Behavior:       behavior,
		},
	}
}

// PodsMetric is a Pods metric source on the per-pod custom metric with an
// AverageValue target.
func PodsMetric(metric string, averageValue int64) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: metric},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(averageValue, resource.DecimalSI)},
		},
	}
}

// CPUUtilization is a Resource metric source on the pods' cpu with a
// Utilization target of percent of their requests.
func CPUUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name:   "cpu",
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent},
		},
	}
}

// ExternalMetric is an External metric source on metric, narrowed by the
// labels matchLabels (none: every series), with an AverageValue target
// (the sum divided by the current replicas) of averageValue.
func ExternalMetric(metric string, matchLabels map[string]string, averageValue int64) autoscalingv2.MetricSpec {
	var selector *metav1.LabelSelector
	if len(matchLabels) > 0 {
		selector = &metav1.LabelSelector{MatchLabels: matchLabels}
	}
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ExternalMetricSourceType,
		External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: metric, Selector: selector},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(averageValue, resource.DecimalSI)},
		},
	}
}

// ExternalValueMetric is an External metric source on every series of
// metric with a Value target: the sum against value, scaling the ready pods.
func ExternalValueMetric(metric string, value int64) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ExternalMetricSourceType,
		External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: metric},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(value, resource.DecimalSI)},
		},
	}
}

// ServiceMetric is an Object metric source on metric of the Service named
// service, with a target of typ (Value or AverageValue) of target.
func ServiceMetric(metric, service string, typ autoscalingv2.MetricTargetType, target int64) autoscalingv2.MetricSpec {
	t := autoscalingv2.MetricTarget{Type: typ}
	if typ == autoscalingv2.ValueMetricType {
		t.Value = resource.NewQuantity(target, resource.DecimalSI)
	} else {
		t.AverageValue = resource.NewQuantity(target, resource.DecimalSI)
	}
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ObjectMetricSourceType,
		Object: &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: service},
			Metric:          autoscalingv2.MetricIdentifier{Name: metric},
			Target:          t,
		},
	}
}

// ContainerCPUUtilization is a ContainerResource metric source on the cpu
// of container with a Utilization target of percent of its request.
func ContainerCPUUtilization(container string, percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{
		Type: autoscalingv2.ContainerResourceMetricSourceType,
		ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
			Name: "cpu", Container: container,
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &percent},
		},
	}
}
