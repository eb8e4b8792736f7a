package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// podAutoscalerYAML is a PodAutoscaler on one custom metric; extra is more
// YAML indented under spec (e.g. a behavior).
func podAutoscalerYAML(name, kind, target string, minReplicas, maxReplicas int, metric, averageValue, extra string) []byte {
	return framework.PodAutoscalerYAML(name, kind, target, minReplicas, maxReplicas, fmt.Sprintf(`  customMetrics:
  - metricName: %s
    averageValue: "%s"
%s`, metric, averageValue, extra))
}

// applyPodAutoscaler applies doc in ns; if the test fails, the PodAutoscaler's status is logged
// at its end (a wait that timed out says only what it waited for).
func applyPodAutoscaler(ctx context.Context, t *testing.T, ns string, doc []byte) {
	t.Helper()
	var meta metav1.PartialObjectMetadata
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		t.Fatalf("PodAutoscaler document: %v", err)
	}
	cluster.Apply(ctx, t, ns, doc)
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // the test's context is done
		defer cancel()
		pa, err := getPodAutoscaler(ctx, t, ns, meta.Name)
		if err != nil {
			t.Logf("PodAutoscaler %s/%s at the failure: %v", ns, meta.Name, err)
			return
		}
		t.Logf("PodAutoscaler %s/%s at the failure: %s; current metrics %+v; last decision %+v",
			ns, meta.Name, describeConditions(pa), pa.Status.CurrentMetrics, pa.Status.LastDecision)
	})
}

func podpilotClient(t *testing.T) versioned.Interface {
	t.Helper()
	c, err := versioned.NewForConfig(cluster.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func getPodAutoscaler(ctx context.Context, t *testing.T, ns, name string) (*podpilotv1alpha1.PodAutoscaler, error) {
	return podpilotClient(t).AutoscalingV1alpha1().PodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
}

func describeConditions(pa *podpilotv1alpha1.PodAutoscaler) string {
	var b strings.Builder
	fmt.Fprintf(&b, "replicas %d→%d, targets %q; ", pa.Status.CurrentReplicas, pa.Status.DesiredReplicas, pa.Status.Targets)
	for _, c := range pa.Status.Conditions {
		fmt.Fprintf(&b, "%s=%s (%s: %s); ", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}

func waitPodAutoscalerCondition(ctx context.Context, t *testing.T, ns, name, typ string, status metav1.ConditionStatus) {
	t.Helper()
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("PodAutoscaler %s %s=%s", name, typ, status), func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, name)
		if err != nil {
			return false, "", err
		}
		return meta.IsStatusConditionPresentAndEqual(pa.Status.Conditions, typ, status), describeConditions(pa), nil
	})
}

func TestPodAutoscalerScalesDeploymentOnCustomMetric(t *testing.T) {
	testPodAutoscalerScales(t, "Deployment", "deployment")
}

func TestPodAutoscalerScalesStatefulSetOnCustomMetric(t *testing.T) {
	testPodAutoscalerScales(t, "StatefulSet", "StatefulSet")
}

// testPodAutoscalerScales runs the seed's custom metric (zdns_vanguard_qps,
// averageValue 2000, 1–5 replicas) against a workload: up as the load rises
// past 2000 per pod, not beyond 5, and down after the stabilization window
// (20s for the shared podpilot).
func testPodAutoscalerScales(t *testing.T, kind, specKind string) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-"+strings.ToLower(kind))
	var err error
	if kind == "Deployment" {
		_, err = cluster.Client.AppsV1().Deployments(ns).Create(ctx, cluster.Deployment("vg1-vanguard", 1), metav1.CreateOptions{})
	} else {
		_, err = cluster.Client.AppsV1().StatefulSets(ns).Create(ctx, cluster.StatefulSet("vg1-vanguard", 1), metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("create %s: %v", kind, err)
	}
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "vg1-vanguard", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(1500)
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("hpa-vg1-vanguard", specKind, "vg1-vanguard", 1, 5, "zdns_vanguard_qps", "2000", ""))
	waitPodAutoscalerCondition(ctx, t, ns, "hpa-vg1-vanguard", "ScalingActive", metav1.ConditionTrue)

	load.Set(7000) // ceil(7000/2000) = 4
	cluster.WaitReplicas(ctx, t, 2*time.Minute, kind, ns, "vg1-vanguard", 4)
	load.Set(20000) // ceil(10) clamped to maxReplicas 5
	cluster.WaitReplicas(ctx, t, 2*time.Minute, kind, ns, "vg1-vanguard", 5)
	waitPodAutoscalerCondition(ctx, t, ns, "hpa-vg1-vanguard", "ScalingLimited", metav1.ConditionTrue)
	load.Set(3000) // ceil(1.5) = 2 once the 20s stabilization window has passed
	cluster.WaitReplicas(ctx, t, 2*time.Minute, kind, ns, "vg1-vanguard", 2)

	pa, err := getPodAutoscaler(ctx, t, ns, "hpa-vg1-vanguard")
	if err != nil {
		t.Fatal(err)
	}
	if want := kind + "/vg1-vanguard"; pa.Status.Reference != want {
		t.Errorf("status.reference = %q, want %q", pa.Status.Reference, want)
	}
	if pa.Status.LastScaleTime == nil || len(pa.Status.CurrentMetrics) != 1 || pa.Status.ObservedGeneration != pa.Generation {
		t.Errorf("status incomplete: %+v", pa.Status)
	}
	events, err := cluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=hpa-vg1-vanguard"})
	if err != nil {
		t.Fatal(err)
	}
	rescales := 0
	for _, e := range events.Items {
		if e.Reason == "SuccessfulRescale" {
			rescales++
		}
	}
	if rescales < 3 {
		t.Errorf("%d SuccessfulRescale events, want at least 3", rescales)
	}
}

// TestPodAutoscalerCountsMissingPodsAsTargetOnScaleDown: 2 pods, one at 1000
// against a target of 2000 and one without any sample. Ignoring the missing
// pod would scale to 1; the rule counts it as using the target on a
// scale-down, (1000+2000)/2/2000 = 0.75 → ceil(0.75 × 2) = 2, so nothing
// changes until the second pod reports too.
func TestPodAutoscalerCountsMissingPodsAsTargetOnScaleDown(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-missing")
	pods := startWorkload(ctx, t, ns, "vg1-vanguard", 2)
	exp := serveExporter(t)
	exp.SetGauge("zdns_vanguard_qps", map[string]string{"namespace": ns, "pod": pods[0]}, 1000)
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("missing", "deployment", "vg1-vanguard", 1, 5, "zdns_vanguard_qps", "2000",
		"  behavior: {scaleDown: {stabilizationWindowSeconds: 0}}\n"))
	waitPodAutoscalerCondition(ctx, t, ns, "missing", "ScalingActive", metav1.ConditionTrue)
	cluster.HoldReplicas(ctx, t, 10*time.Second, "Deployment", ns, "vg1-vanguard", 2)

	exp.SetGauge("zdns_vanguard_qps", map[string]string{"namespace": ns, "pod": pods[1]}, 1000)
	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, "vg1-vanguard", 1)
}

func TestPodAutoscalerInvalidSpecsAreRejectedNamingTheField(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-invalid")
	expectRejected(ctx, t, ns, []rejection{
		{"maxReplicas below minReplicas", string(podAutoscalerYAML("a", "deployment", "x", 3, 2, "m", "1", "")), "spec.maxReplicas"},
		{"minReplicas 0 without an Object or External metric", string(podAutoscalerYAML("b", "deployment", "x", 0, 2, "m", "1", "")), "spec.minReplicas"},
		{"a negative minReplicas", string(podAutoscalerYAML("g", "deployment", "x", -1, 2, "m", "1", "")), "spec.minReplicas"},
		{"a kind that is not deployment or statefulset", string(podAutoscalerYAML("c", "Job", "x", 1, 2, "m", "1", "")), "spec.scaleTargetKind"},
		{"a zero averageValue", string(podAutoscalerYAML("d", "deployment", "x", 1, 2, "m", "0", "")), "spec.customMetrics[0].averageValue"},
		{"no metric at all", `apiVersion: autoscaling.podpilot.io/v1alpha1
kind: PodAutoscaler
metadata: {name: e}
spec: {scaleTargetKind: deployment, scaleTargetName: x, maxReplicas: 2}
`, "spec"},
		{"Utilization with an averageValue", `apiVersion: autoscaling.podpilot.io/v1alpha1
kind: PodAutoscaler
metadata: {name: f}
spec:
  scaleTargetKind: deployment
  scaleTargetName: x
  maxReplicas: 2
  resourceMetrics: [{resourceName: cpu, targetType: Utilization, averageValue: 100m}]
`, "spec.resourceMetrics[0]"},
	})
	t.Run("the seed's example is accepted", func(t *testing.T) {
		doc, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "examples", "hpa-vg1-vanguard.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.ApplyErr(ctx, ns, doc, true); err != nil {
			t.Errorf("seed example rejected: %v", err)
		}
	})
}

// TestPodAutoscalerKeepsHistoryAcrossRestart: a scale-down policy allows one
// pod per 10 minutes. After one scale-down, podpilot is restarted; the new
// process must read the scale event back from status and hold the replicas,
// where a controller that forgot it would scale down again at once.
func TestPodAutoscalerKeepsHistoryAcrossRestart(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-restart")
	startWorkload(ctx, t, ns, "vg1-vanguard", 4)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "vg1-vanguard", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(8000) // 4 pods at 2000: steady
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("restart", "deployment", "vg1-vanguard", 1, 5, "zdns_vanguard_qps", "2000", `  behavior:
    scaleDown:
      stabilizationWindowSeconds: 0
      policies: [{type: Pods, value: 1, periodSeconds: 600}]
`))
	waitPodAutoscalerCondition(ctx, t, ns, "restart", "ScalingActive", metav1.ConditionTrue)
	load.Set(1000) // wants 1; the policy allows 4 → 3 now, then nothing for 10 minutes
	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, "vg1-vanguard", 3)

	restartSharedPodpilot(ctx, t)
	pa, err := getPodAutoscaler(ctx, t, ns, "restart")
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Status.ScaleEvents.ScaleDown) == 0 {
		t.Fatalf("no scale-down event persisted in status: %+v", pa.Status)
	}
	// Many 2s sync periods of the new process pass without a second scale-down.
	cluster.HoldReplicas(ctx, t, 15*time.Second, "Deployment", ns, "vg1-vanguard", 3)
}

// restartSharedPodpilot stops the podpilot every test uses and starts a new
// one with the same arguments, re-registering the metrics APIs.
func restartSharedPodpilot(ctx context.Context, t *testing.T) {
	t.Helper()
	metricsServer.Stop()
	if err := startMetricsServer(ctx); err != nil {
		t.Fatalf("restart podpilot: %v", err)
	}
	t.Logf("podpilot restarted (log %s)", metricsServer.LogPath)
}

// TestPodAutoscalerLeavesItsStatusAloneWhileNothingChanges: at a steady
// load a round changes nothing a reader can see (the same replicas,
// conditions, metric values and recommendation), so after the first rounds
// the status, and with it the object's resourceVersion, stays as written
// over many 2s sync periods, and the target's scale is never written.
func TestPodAutoscalerLeavesItsStatusAloneWhileNothingChanges(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-steady")
	startWorkload(ctx, t, ns, "vg1-vanguard", 2)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "vg1-vanguard", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(3000) // 1500 per pod against 2000: 2 replicas, outside the tolerance but proposing no change
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("steady", "deployment", "vg1-vanguard", 1, 5, "zdns_vanguard_qps", "2000", ""))
	framework.WaitFor(ctx, t, time.Minute, "PodAutoscaler steady shows 1500/2k", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "steady")
		if err != nil {
			return false, "", err
		}
		return pa.Status.Targets == "1500/2k" && meta.IsStatusConditionTrue(pa.Status.Conditions, "ScalingActive"), describeConditions(pa), nil
	})
	first, err := getPodAutoscaler(ctx, t, ns, "steady")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(12 * time.Second)
	for time.Now().Before(deadline) {
		pa, err := getPodAutoscaler(ctx, t, ns, "steady")
		if err != nil {
			t.Fatal(err)
		}
		if pa.ResourceVersion != first.ResourceVersion {
			t.Fatalf("status rewritten at a steady load:\nbefore %+v\nafter  %+v", first.Status, pa.Status)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	cluster.HoldReplicas(ctx, t, time.Second, "Deployment", ns, "vg1-vanguard", 2)
}
