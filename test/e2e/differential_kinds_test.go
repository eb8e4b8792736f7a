package e2e

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// The differential cases of issue 22 §3 for the metric kinds beyond Pods,
// Resource and External AverageValue, and for behaviors with two policies
// in each direction. They run in TestDifferentialStockHPAAgainstPodAutoscaler
// beside the others, on the same schedule machinery.

// gaugeDrive exports one gauge labelled namespace plus labels, set to the
// level: the data of an External or Object metric, the same for both
// autoscalers.
func gaugeDrive(metric string, labels map[string]string) func(context.Context, *testing.T, string, *exporter.Server, []string) func(float64) {
	return func(_ context.Context, _ *testing.T, ns string, exp *exporter.Server, _ []string) func(float64) {
		l := map[string]string{"namespace": ns}
		for k, v := range labels {
			l[k] = v
		}
		return func(level float64) { exp.SetGauge(metric, l, level) }
	}
}

// valueSteps is the schedule of a Value target of 30 (External or Object):
// the ratio value/30 scales the ready pods, so a constant level above the
// target doubles them every round until maxReplicas, and one within the
// tolerance holds wherever they are. Without a behavior, the scale-up limit
// is max(2 × current, 4) and scale-downs wait the flag's 30 s window.
func valueSteps() []differentialStep {
	return []differentialStep{
		{30, 15 * time.Second, 2, "30 against Value 30: within tolerance"},
		{60, 45 * time.Second, 10, "ratio 2 doubles the ready pods each round: 2→4→8→10 (max)"},
		{32, 15 * time.Second, 10, "ratio 1.07: within tolerance, 10 held"},
		{15, 15 * time.Second, 10, "wants ceil(0.5×10)=5; held by the 30s downscale stabilization"},
		{15, 35 * time.Second, 5, "5 after the window; the next, ceil(0.5×5)=3, held by the window of the 5s"},
	}
}

// externalValueCase: an External metric (a backlog gauge of the namespace,
// every series summed) with a Value target.
func externalValueCase() differentialCase {
	const metric = "diff_backlog_items"
	return differentialCase{
		name: "external metric Value",
		hpa: func(name string) *autoscalingv2.HorizontalPodAutoscaler {
			return framework.HPA(name, 1, 10, nil, framework.ExternalValueMetric(metric, 30))
		},
		initial: 2,
		level:   metric,
		drive:   gaugeDrive(metric, nil),
		steps:   valueSteps(),
	}
}

// diffService is the Service the Object cases' metric describes.
const diffService = "web"

// createService creates diffService in ns.
func createService(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: diffService},
		Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": diffService}, Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := cluster.Client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create service: %v", err)
	}
}

// objectCase is an Object metric on the gauge metric of diffService (served
// by the per-Service rule) with a target of typ, under behavior.
func objectCase(name, metric string, typ autoscalingv2.MetricTargetType, target int64, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior,
	steps []differentialStep) differentialCase {
	return differentialCase{
		name: name,
		hpa: func(name string) *autoscalingv2.HorizontalPodAutoscaler {
			return framework.HPA(name, 1, 10, behavior, framework.ServiceMetric(metric, diffService, typ, target))
		},
		initial: 2,
		level:   metric + `{service="web"}`,
		drive:   gaugeDrive(metric, map[string]string{"service": diffService}),
		setup:   createService,
		steps:   steps,
	}
}

// objectValueCase: an Object metric with a Value target of 30.
func objectValueCase() differentialCase {
	return objectCase("object metric Value", "diff_requests_in_flight", autoscalingv2.ValueMetricType, 30, nil, valueSteps())
}

// objectAverageValueCase: an Object metric with an AverageValue target of
// 10 per replica (the value over the current replicas), under a scale-down
// policy of 3 pods per 30 s after a 20 s stabilization; scale-up takes the
// default policies (the larger of 100% and 4 pods per 15 s).
func objectAverageValueCase() differentialCase {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleDown: scalingRules(20, autoscalingv2.PodsScalingPolicy, 3, 30),
	}
	return objectCase("object metric AverageValue", "diff_sessions", autoscalingv2.AverageValueMetricType, 10, behavior, []differentialStep{
		{20, 15 * time.Second, 2, "10 per replica: at the target"},
		{85, 50 * time.Second, 9, "ceil(85/10)=9; the default scale-up (Max of 100% and 4 pods per 15s) allows 2→6, then 9"},
		{22, 10 * time.Second, 9, "wants ceil(22/10)=3; held by the 20s scale-down stabilization"},
		{22, 28 * time.Second, 6, "Pods 3 per 30s: 9→6"},
		{22, 35 * time.Second, 3, "the next 30s period allows 6→3"},
	})
}

// containerResourceCase: the cpu case (its schedule, without a behavior)
// on a ContainerResource metric, cpu Utilization 50% of the app container's
// 100m request, in pods that also run a sidecar requesting 900m without
// using cpu: the pod-level utilization would be a tenth and scale down.
func containerResourceCase() differentialCase {
	dc := cpuUtilizationCase()
	dc.name, dc.level = "container resource cpu utilization", "app container cpu cores (sum)"
	dc.hpa = func(name string) *autoscalingv2.HorizontalPodAutoscaler {
		return framework.HPA(name, 1, 10, nil, framework.ContainerCPUUtilization("app", 50))
	}
	dc.deployment = func(name string, replicas int32) *appsv1.Deployment { return sidecarDeployment(name, replicas, false) }
	return dc
}

// twoPoliciesEachWayCase: a Pods metric (100 per pod targeted) under two
// policies in each direction: scale-up selects the Min of Pods 4 and
// Percent 50 per 60 s; scale-down, after a 30 s stabilization, the Max
// (the larger change) of Pods 1 and Percent 50 per 30 s.
func twoPoliciesEachWayCase() differentialCase {
	policies := func(window int32, selectPolicy autoscalingv2.ScalingPolicySelect, period int32, pods, percent int32) *autoscalingv2.HPAScalingRules {
		return &autoscalingv2.HPAScalingRules{
			StabilizationWindowSeconds: &window,
			SelectPolicy:               &selectPolicy,
			Policies: []autoscalingv2.HPAScalingPolicy{
				{Type: autoscalingv2.PodsScalingPolicy, Value: pods, PeriodSeconds: period},
				{Type: autoscalingv2.PercentScalingPolicy, Value: percent, PeriodSeconds: period},
			},
		}
	}
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{
		ScaleUp:   policies(0, autoscalingv2.MinChangePolicySelect, 60, 4, 50),
		ScaleDown: policies(30, autoscalingv2.MaxChangePolicySelect, 30, 1, 50),
	}
	return podsMetricCase("two policies each way", behavior, []differentialStep{
		{200, 15 * time.Second, 2, "100 per pod: at the target"},
		{1000, 25 * time.Second, 3, "wants 10; Min of Pods 4 (6) and Percent 50 (3) per 60s: 3"},
		{1000, 60 * time.Second, 5, "after the 60s period, from 3: Min of 7 and ceil(4.5)=5"},
		{100, 15 * time.Second, 5, "wants 1; held by the 30s scale-down stabilization"},
		{100, 35 * time.Second, 2, "Max change of Pods 1 (4) and Percent 50 (2) per 30s from 5: 2"},
		{100, 30 * time.Second, 1, "once that scale-down left the 30s period: 1"},
	})
}
