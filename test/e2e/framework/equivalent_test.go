package framework

import (
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
)

// TestPodAutoscalerForConvertsEveryHPATheE2EBuilds: each metric the framework's HPA helpers make
// converts, named as asked and scaling the Deployment target, and what the HPA leaves to
// kube-controller-manager stays left to podpilot's flags (which the e2e sets to the same values).
func TestPodAutoscalerForConvertsEveryHPATheE2EBuilds(t *testing.T) {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}},
	}}
	metrics := map[string]autoscalingv2.MetricSpec{
		"Pods":                      PodsMetric("m", 100),
		"Resource cpu":              CPUUtilization(50),
		"External AverageValue":     ExternalMetric("q", map[string]string{"queue": "q1"}, 10),
		"External Value":            ExternalValueMetric("q", 10),
		"Object Value":              ServiceMetric("rps", "web", autoscalingv2.ValueMetricType, 100),
		"Object AverageValue":       ServiceMetric("rps", "web", autoscalingv2.AverageValueMetricType, 10),
		"ContainerResource cpu app": ContainerCPUUtilization("app", 50),
	}
	for name, m := range metrics {
		t.Run(name, func(t *testing.T) {
			pa, err := PodAutoscalerFor(HPA("hpa", 1, 10, behavior, m), "ppa", "app")
			if err != nil {
				t.Fatalf("PodAutoscalerFor: %v", err)
			}
			if pa.Name != "ppa" || pa.Namespace != "" || pa.Spec.ScaleTargetKind != "deployment" || pa.Spec.ScaleTargetName != "app" {
				t.Errorf("PodAutoscaler %s/%s scales %s/%s; want ppa in the caller's namespace scaling deployment app",
					pa.Namespace, pa.Name, pa.Spec.ScaleTargetKind, pa.Spec.ScaleTargetName)
			}
			if b := pa.Spec.Behavior; b == nil || b.ScaleUp == nil || b.ScaleUp.Tolerance != nil || b.ScaleDown != nil {
				t.Errorf("behavior = %+v; want the HPA's as written, nothing filled in from the controller's defaults", b)
			}
		})
	}
}
