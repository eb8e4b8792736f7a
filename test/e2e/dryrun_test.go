package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestDryRunPodAutoscalerBesideStockHPA runs a dry-run PodAutoscaler and a stock HPA with the same
// metric, target and bounds on one Deployment. The HPA scales; the PodAutoscaler reports, once
// settled, the replica count the HPA decided on, and never writes the scale: every change of the
// Deployment's spec is one of the HPA's SuccessfulRescale events, and only kube-controller-manager
// manages the scale subresource.
func TestDryRunPodAutoscalerBesideStockHPA(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "dryrun")
	const name = "vg1-vanguard"
	startWorkload(ctx, t, ns, name, 1)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, name, "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(50)
	if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx,
		framework.PodsMetricHPA(name, "zdns_vanguard_qps", 100, 1, 5), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("dry", "deployment", name, 1, 5, "zdns_vanguard_qps", "100", "  dryRun: true\n"))
	waitHPAMetric(ctx, t, ns, name)
	waitDryRunMatchesHPA(ctx, t, ns, name, 1)

	load.Set(450) // ceil(450/100) = 5
	waitDryRunMatchesHPA(ctx, t, ns, name, 5)
	load.Set(150) // ceil(150/100) = 2, after the stabilization windows (HPA 30s, podpilot 20s)
	waitDryRunMatchesHPA(ctx, t, ns, name, 2)

	pa, err := getPodAutoscaler(ctx, t, ns, "dry")
	if err != nil {
		t.Fatal(err)
	}
	if pa.Status.Mode != podpilotv1alpha1.DryRunMode || pa.Status.LastScaleTime != nil {
		t.Errorf("mode = %q, lastScaleTime = %v; want DryRun and never scaled", pa.Status.Mode, pa.Status.LastScaleTime)
	}
	// kubectl get ppa: the server-side table has a Mode column saying DryRun.
	table, err := cluster.Client.CoreV1().RESTClient().Get().AbsPath("/apis/autoscaling.podpilot.io/v1alpha1/namespaces", ns, "podautoscalers", "dry").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
	if err != nil {
		t.Fatalf("get the PodAutoscaler as a table: %v", err)
	}
	if !strings.Contains(string(table), `"name":"Mode"`) || !strings.Contains(string(table), `"DryRun"`) {
		t.Errorf("kubectl get ppa shows no Mode column with DryRun: %s", table)
	}
	d, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range d.ManagedFields {
		if f.Subresource == "scale" && f.Manager != "kube-controller-manager" {
			t.Errorf("the scale subresource is managed by %q, want only kube-controller-manager", f.Manager)
		}
	}
	hpaRescales := countEvents(ctx, t, ns, "HorizontalPodAutoscaler", name, "SuccessfulRescale")
	specChanges := int(d.Generation - 1)
	t.Logf("deployment spec changes %d, HPA SuccessfulRescale events %d, PodAutoscaler DryRunRescale events %d, SuccessfulRescale %d",
		specChanges, hpaRescales, countEvents(ctx, t, ns, "PodAutoscaler", "dry", "DryRunRescale"),
		countEvents(ctx, t, ns, "PodAutoscaler", "dry", "SuccessfulRescale"))
	if specChanges != hpaRescales {
		t.Errorf("the deployment's spec changed %d times, the HPA rescaled %d times: someone else scaled", specChanges, hpaRescales)
	}
	if n := countEvents(ctx, t, ns, "PodAutoscaler", "dry", "SuccessfulRescale"); n != 0 {
		t.Errorf("the dry-run PodAutoscaler has %d SuccessfulRescale events, want 0", n)
	}
}

// waitDryRunMatchesHPA waits until the Deployment, the HPA's desiredReplicas and the dry-run
// PodAutoscaler's current and desired replicas all equal want.
func waitDryRunMatchesHPA(ctx context.Context, t *testing.T, ns, name string, want int32) {
	t.Helper()
	framework.WaitFor(ctx, t, 3*time.Minute, fmt.Sprintf("the HPA and the dry run to settle on %d", want), func(ctx context.Context) (bool, string, error) {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		pa, err := getPodAutoscaler(ctx, t, ns, "dry")
		if err != nil {
			return false, "", err
		}
		replicas, err := cluster.Replicas(ctx, "Deployment", ns, name)
		if err != nil {
			return false, "", err
		}
		ok := replicas == want && h.Status.DesiredReplicas == want && pa.Status.CurrentReplicas == want && pa.Status.DesiredReplicas == want
		return ok, fmt.Sprintf("deployment %d, HPA desired %d, dry run %s", replicas, h.Status.DesiredReplicas, describeConditions(pa)), nil
	})
}

// countEvents counts the events of reason on the object kind/name, with their repeat counts.
func countEvents(ctx context.Context, t *testing.T, ns, kind, name, reason string) int {
	t.Helper()
	events, err := cluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == kind && e.Reason == reason {
			n += int(max(e.Count, 1))
		}
	}
	return n
}
