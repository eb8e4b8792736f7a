package framework

import (
	"encoding/json"
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// PodAutoscalerFor is the PodAutoscaler equivalent to the stock HPA h, named
// name and scaling Deployment target: the same bounds, the same metrics and
// the same behavior (the two behavior types share their JSON form, so it is
// carried over field by field, tolerance included). It fails on a metric
// kind the PodAutoscaler cannot express.
func PodAutoscalerFor(h *autoscalingv2.HorizontalPodAutoscaler, name, target string) (*podpilotv1alpha1.PodAutoscaler, error) {
	pa := &podpilotv1alpha1.PodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: podpilotv1alpha1.PodAutoscalerSpec{
			ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment,
			ScaleTargetName: target,
			MinReplicas:     h.Spec.MinReplicas,
			MaxReplicas:     h.Spec.MaxReplicas,
		},
	}
	for i, m := range h.Spec.Metrics {
		if err := addMetric(&pa.Spec, m); err != nil {
			return nil, fmt.Errorf("metric %d of HPA %s: %w", i, h.Name, err)
		}
	}
	if h.Spec.Behavior != nil {
		b, err := json.Marshal(h.Spec.Behavior)
		if err != nil {
			return nil, fmt.Errorf("encode behavior of HPA %s: %w", h.Name, err)
		}
		pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{}
		if err := json.Unmarshal(b, pa.Spec.Behavior); err != nil {
			return nil, fmt.Errorf("behavior of HPA %s as a PodAutoscaler's: %w", h.Name, err)
		}
	}
	return pa, nil
}

// addMetric adds the PodAutoscaler form of the HPA metric m to spec.
func addMetric(spec *podpilotv1alpha1.PodAutoscalerSpec, m autoscalingv2.MetricSpec) error {
	switch {
	case m.Type == autoscalingv2.PodsMetricSourceType && m.Pods != nil && m.Pods.Target.AverageValue != nil:
		spec.CustomMetrics = append(spec.CustomMetrics, podpilotv1alpha1.CustomMetricSpec{
			MetricName: m.Pods.Metric.Name, AverageValue: *m.Pods.Target.AverageValue, Selector: podpilotv1alpha1.MetricSelectorOf(m.Pods.Metric.Selector),
		})
	case m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil:
		spec.ResourceMetrics = append(spec.ResourceMetrics, podpilotv1alpha1.ResourceMetricSpec{
			ResourceName:       m.Resource.Name,
			TargetType:         podpilotv1alpha1.MetricTargetType(m.Resource.Target.Type),
			AverageUtilization: m.Resource.Target.AverageUtilization,
			AverageValue:       m.Resource.Target.AverageValue,
		})
	case m.Type == autoscalingv2.ExternalMetricSourceType && m.External != nil:
		spec.ExternalMetrics = append(spec.ExternalMetrics, podpilotv1alpha1.ExternalMetricSpec{
			MetricName:   m.External.Metric.Name,
			Selector:     podpilotv1alpha1.MetricSelectorOf(m.External.Metric.Selector),
			TargetType:   podpilotv1alpha1.ValueTargetType(m.External.Target.Type),
			Value:        m.External.Target.Value,
			AverageValue: m.External.Target.AverageValue,
		})
	case m.Type == autoscalingv2.ObjectMetricSourceType && m.Object != nil:
		o := m.Object
		spec.ObjectMetrics = append(spec.ObjectMetrics, podpilotv1alpha1.ObjectMetricSpec{
			DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: o.DescribedObject.APIVersion, Kind: o.DescribedObject.Kind, Name: o.DescribedObject.Name},
			MetricName:      o.Metric.Name,
			Selector:        podpilotv1alpha1.MetricSelectorOf(o.Metric.Selector),
			TargetType:      podpilotv1alpha1.ValueTargetType(o.Target.Type),
			Value:           o.Target.Value,
			AverageValue:    o.Target.AverageValue,
		})
	case m.Type == autoscalingv2.ContainerResourceMetricSourceType && m.ContainerResource != nil:
		c := m.ContainerResource
		spec.ContainerResourceMetrics = append(spec.ContainerResourceMetrics, podpilotv1alpha1.ContainerResourceMetricSpec{
			ResourceName:       c.Name,
			Container:          c.Container,
			TargetType:         podpilotv1alpha1.MetricTargetType(c.Target.Type),
			AverageUtilization: c.Target.AverageUtilization,
			AverageValue:       c.Target.AverageValue,
		})
	default:
		return fmt.Errorf("no PodAutoscaler equivalent of a %s metric with target %s", m.Type, metricTargetType(m))
	}
	return nil
}

func metricTargetType(m autoscalingv2.MetricSpec) string {
	switch {
	case m.Pods != nil:
		return string(m.Pods.Target.Type)
	case m.Resource != nil:
		return string(m.Resource.Target.Type)
	case m.External != nil:
		return string(m.External.Target.Type)
	case m.Object != nil:
		return string(m.Object.Target.Type)
	case m.ContainerResource != nil:
		return string(m.ContainerResource.Target.Type)
	}
	return "unknown"
}
