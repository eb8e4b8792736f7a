package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

const mi = 1 << 20

func TestResourceMetricsAPIServesPodUsageFromPrometheus(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "top")
	pods := startWorkload(ctx, t, ns, "web", 2)
	usage := cluster.NewUsage(ctx, serveExporter(t), ns, "web", 0.05, 64*mi)
	t.Cleanup(usage.Stop)
	mc, err := metricsclient.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	framework.WaitFor(ctx, t, time.Minute, "metrics.k8s.io usage of both pods", func(ctx context.Context) (bool, string, error) {
		l, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		ok := len(l.Items) == len(pods)
		var state string
		for _, pm := range l.Items {
			for _, c := range pm.Containers {
				state += fmt.Sprintf("%s/%s cpu=%s mem=%s; ", pm.Name, c.Name, c.Usage.Cpu(), c.Usage.Memory())
				ok = ok && c.Name == "app" && c.Usage.Memory().Value() == 64*mi && c.Usage.Cpu().MilliValue() > 0
			}
		}
		return ok, state, nil
	})
}

// TestPodAutoscalerSeedExample applies the seed's example as written
// (zdns_vanguard_qps averageValue 2000, cpu Utilization 50%, memory
// AverageValue 256Mi, 1–5 replicas) with cpu and memory served by
// metrics.k8s.io: low cpu and memory, so the custom metric drives it up past
// 2000 per pod, not beyond 5, and back down after the stabilization window.
func TestPodAutoscalerSeedExample(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "seed")
	startWorkload(ctx, t, ns, "vg1-vanguard", 1)
	exp := serveExporter(t)
	usage := cluster.NewUsage(ctx, exp, ns, "vg1-vanguard", 0.02, 64*mi) // 20% of 100m, 64Mi of 256Mi
	t.Cleanup(usage.Stop)
	load := cluster.NewLoad(ctx, exp, ns, "vg1-vanguard", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(1500)
	doc, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "examples", "hpa-vg1-vanguard.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cluster.Apply(ctx, t, ns, doc)
	framework.WaitFor(ctx, t, 2*time.Minute, "all three metrics valid", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "hpa-vg1-vanguard")
		if err != nil {
			return false, "", err
		}
		return len(pa.Status.CurrentMetrics) == 3 && !stringsContains(pa.Status.Targets, "unknown"), describeConditions(pa), nil
	})

	load.Set(7000) // ceil(7000/2000) = 4
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "vg1-vanguard", 4)
	load.Set(20000) // 10 wanted, not beyond maxReplicas 5
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "vg1-vanguard", 5)
	load.Set(3000) // qps 2, cpu and memory at most 2: down to 2 after 20s
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "vg1-vanguard", 2)
}

// resourceOnlyPodAutoscaler is a PodAutoscaler on one resource metric.
func resourceOnlyPodAutoscaler(name, target, metric string) []byte {
	return framework.PodAutoscalerYAML(name, "deployment", target, 1, 5, fmt.Sprintf("  resourceMetrics:\n  - %s\n", metric))
}

func TestPodAutoscalerScalesOnCPUUtilization(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-cpu")
	startWorkload(ctx, t, ns, "web", 2)
	usage := cluster.NewUsage(ctx, serveExporter(t), ns, "web", 0.08, 64*mi) // 80% of the 100m request
	t.Cleanup(usage.Stop)
	cluster.Apply(ctx, t, ns, resourceOnlyPodAutoscaler("cpu", "web", "{resourceName: cpu, targetType: Utilization, averageUtilization: 50}"))
	// 80% against 50% on every pod: up until maxReplicas.
	cluster.WaitReplicas(ctx, t, 4*time.Minute, "Deployment", ns, "web", 5)
	pa, err := getPodAutoscaler(ctx, t, ns, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Status.CurrentMetrics) != 1 || pa.Status.CurrentMetrics[0].AverageUtilization == nil {
		t.Errorf("no cpu utilization in status: %+v", pa.Status.CurrentMetrics)
	}
}

func TestPodAutoscalerScalesOnMemoryAverageValue(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-mem")
	startWorkload(ctx, t, ns, "web", 2)
	usage := cluster.NewUsage(ctx, serveExporter(t), ns, "web", 0.01, 300*mi)
	t.Cleanup(usage.Stop)
	cluster.Apply(ctx, t, ns, resourceOnlyPodAutoscaler("mem", "web", "{resourceName: memory, targetType: AverageValue, averageValue: 256Mi}"))
	// 300Mi against 256Mi on every pod: up until maxReplicas.
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "web", 5)
	usage.Set(0.01, 100*mi) // ceil(100/256 × 5) = 2 after the 20s window
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "web", 2)
}
