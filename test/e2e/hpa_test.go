package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

func TestStockHPAScalesOnPodsMetricFromPodpilot(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "hpa")
	startWorkload(ctx, t, ns, "vg1-vanguard", 1)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "vg1-vanguard", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(50)
	hpa := framework.PodsMetricHPA("vg1-vanguard", "zdns_vanguard_qps", 100, 1, 5)
	if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	waitHPAMetric(ctx, t, ns, "vg1-vanguard")

	load.Set(450) // ceil(450/100) = 5
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "vg1-vanguard", 5)
	load.Set(150) // ceil(150/100) = 2, after the 30s downscale stabilization of hack/local-up.sh
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "vg1-vanguard", 2)
}

// waitHPAMetric waits until the HPA reads a current value of its metric.
func waitHPAMetric(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	framework.WaitFor(ctx, t, time.Minute, "the HPA to read its metric", func(ctx context.Context) (bool, string, error) {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return len(h.Status.CurrentMetrics) > 0, hpaConditions(h), nil
	})
}

func hpaConditions(h *autoscalingv2.HorizontalPodAutoscaler) string {
	var b strings.Builder
	for _, c := range h.Status.Conditions {
		fmt.Fprintf(&b, "%s=%s (%s: %s); ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

func hpaCondition(h *autoscalingv2.HorizontalPodAutoscaler, typ autoscalingv2.HorizontalPodAutoscalerConditionType) corev1.ConditionStatus {
	for _, c := range h.Status.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// TestPrometheusDownNeverScalesDown stops Prometheus under a stock HPA and a
// PodAutoscaler, both holding 3 replicas, and checks that the metrics API
// answers 503 with the cause, that neither scales down, and that both say why.
func TestPrometheusDownNeverScalesDown(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "outage")
	exp := serveExporter(t)
	startWorkload(ctx, t, ns, "hpa-target", 1)
	startWorkload(ctx, t, ns, "ppa-target", 1)
	hpaLoad := cluster.NewLoad(ctx, exp, ns, "hpa-target", "zdns_vanguard_qps", false)
	t.Cleanup(hpaLoad.Stop)
	ppaLoad := cluster.NewLoad(ctx, exp, ns, "ppa-target", "zdns_vanguard_qps", false)
	t.Cleanup(ppaLoad.Stop)
	hpaLoad.Set(300)
	ppaLoad.Set(6000)
	if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, framework.PodsMetricHPA("hpa-target", "zdns_vanguard_qps", 100, 1, 5), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("ppa-target", "deployment", "ppa-target", 1, 5, "zdns_vanguard_qps", "2000", ""))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "hpa-target", 3)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "ppa-target", 3)

	restart, err := cluster.StopPrometheus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := restart(context.WithoutCancel(ctx)); err != nil {
			t.Errorf("restart prometheus: %v", err)
		}
	})
	// Were the metrics read now, they would ask for 1 replica each.
	hpaLoad.Set(10)
	ppaLoad.Set(10)

	path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/zdns_vanguard_qps"
	framework.WaitFor(ctx, t, time.Minute, "503 naming Prometheus from the metrics API", func(ctx context.Context) (bool, string, error) {
		_, err := cluster.RawGet(ctx, path)
		return statusCode(err) == http.StatusServiceUnavailable && strings.Contains(err.Error(), "prometheus"), fmt.Sprint(err), nil
	})
	framework.WaitFor(ctx, t, time.Minute, "the HPA to report ScalingActive=False", func(ctx context.Context) (bool, string, error) {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, "hpa-target", metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return hpaCondition(h, autoscalingv2.ScalingActive) == corev1.ConditionFalse, hpaConditions(h), nil
	})
	waitPodAutoscalerCondition(ctx, t, ns, "ppa-target", "ScalingActive", metav1.ConditionFalse)
	// Several sync periods of both controllers (5s and 2s) pass without a scale-down.
	cluster.HoldReplicas(ctx, t, 15*time.Second, "Deployment", ns, "hpa-target", 3)
	cluster.HoldReplicas(ctx, t, 5*time.Second, "Deployment", ns, "ppa-target", 3)
}
