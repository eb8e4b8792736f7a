package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestFaultTwoAutoscalersOnOneTarget is fault 6: a stock HPA (kube-controller-manager) is
// created on the Deployment a PodAutoscaler already scales. podpilot must refuse the target
// within a round (ScalingActive=False AmbiguousScaleTarget naming the HPA, and a Warning event),
// never write its scale while both exist (the HPA alone scales it), and resume once the HPA is
// deleted. A second PodAutoscaler on the same target makes both refuse. Scaling the Deployment
// by hand is no conflict: the next round starts from the new count.
func TestFaultTwoAutoscalersOnOneTarget(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "fault-two")
	startWorkload(ctx, t, ns, "web", 2)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "web", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(2000) // 1000 per pod: on target at 2 replicas, so nobody scales yet
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("web", "deployment", "web", 1, 10, "zdns_vanguard_qps", "1000", ""))
	waitScalingActive(ctx, t, ns, "web", "ValidMetricFound")

	// A second PodAutoscaler: both refuse, each naming the other.
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("web-2", "deployment", "web", 1, 10, "zdns_vanguard_qps", "1000", ""))
	waitScalingActive(ctx, t, ns, "web", "AmbiguousScaleTarget")
	waitScalingActive(ctx, t, ns, "web-2", "AmbiguousScaleTarget")
	cluster.HoldReplicas(ctx, t, 2*sharedSyncPeriod, "Deployment", ns, "web", 2)
	for _, name := range []string{"web", "web-2"} {
		if n := eventOccurrences(ctx, t, ns, name, "AmbiguousScaleTarget"); n != 1 {
			t.Errorf("PodAutoscaler %s: %d AmbiguousScaleTarget events over several rounds of one conflict, want 1", name, n)
		}
	}
	if err := podpilotClient(t).AutoscalingV1alpha1().PodAutoscalers(ns).Delete(ctx, "web-2", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitScalingActive(ctx, t, ns, "web", "ValidMetricFound")

	// A stock HPA on the same Deployment.
	created := time.Now()
	hpa := framework.PodsMetricHPA("web", "zdns_vanguard_qps", 1000, 1, 10)
	if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, hpa, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	msg := waitScalingActive(ctx, t, ns, "web", "AmbiguousScaleTarget")
	detected := time.Since(created)
	if !strings.Contains(msg, "HorizontalPodAutoscaler/web") {
		t.Errorf("ScalingActive message %q does not name the HPA", msg)
	}
	checkTiming(t, detected <= sharedSyncPeriod+time.Second, "conflict detected %s after the HPA was created, want within a round", detected)

	// The load triples: the HPA alone scales the Deployment to 6; podpilot writes nothing.
	rescalesBefore := eventOccurrences(ctx, t, ns, "web", "SuccessfulRescale")
	load.Set(6000)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "web", 6)
	cluster.HoldReplicas(ctx, t, 4*sharedSyncPeriod, "Deployment", ns, "web", 6)
	if n := eventOccurrences(ctx, t, ns, "web", "SuccessfulRescale") - rescalesBefore; n != 0 {
		t.Errorf("podpilot recorded %d SuccessfulRescale events while the HPA also targeted the Deployment, want 0", n)
	}
	writers := scaleWriters(ctx, t, ns, "web")
	if all := strings.Join(writers, ","); strings.Contains(all, "podpilot") || !strings.Contains(all, "kube-controller-manager") {
		t.Errorf("scale subresource writers %q, want the HPA's (kube-controller-manager) only", writers)
	}
	if n := eventOccurrences(ctx, t, ns, "web", "AmbiguousScaleTarget"); n != 2 {
		t.Errorf("%d AmbiguousScaleTarget events after several rounds of the HPA conflict, want 2: one for the second PodAutoscaler, one for the HPA", n)
	}

	// The HPA is deleted: podpilot resumes.
	if err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	waitScalingActive(ctx, t, ns, "web", "ValidMetricFound")
	resolved := time.Since(deleted)

	// Scaled by hand to 3 (kubectl scale): no conflict, and the next rounds start from 3:
	// 6000 over 3 pods against 1000 → 6. The HPA's deletion reaches kube-controller-manager's
	// informer some time after the API server answered: where the HPA still rescaled (it
	// wrote the scale last), scale by hand again, at most three times.
	for try := 1; ; try++ {
		scaleByHand(ctx, t, ns, "web", 3)
		cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "web", 6)
		last := lastScaleWriter(ctx, t, ns, "web")
		if last != "kube-controller-manager" || try == 3 {
			break
		}
		t.Logf("the deleted HPA still rescaled 3 → 6 (try %d): kube-controller-manager had not seen the deletion yet", try)
	}
	pa, err := getPodAutoscaler(ctx, t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive); c == nil || c.Reason != "ValidMetricFound" {
		t.Errorf("after a scale by hand ScalingActive = %+v, want ValidMetricFound", c)
	}
	if n := eventOccurrences(ctx, t, ns, "web", "SuccessfulRescale") - rescalesBefore; n < 1 {
		t.Errorf("no SuccessfulRescale from 3 after the scale by hand")
	}
	reportFault(t, "two-autoscalers", "ScalingActive=False AmbiguousScaleTarget %.1f s after the HPA was created (sync period %s); "+
		"0 podpilot scale writes while both existed (scale writers %v); active again %.1f s after the HPA was deleted; "+
		"a scale by hand to 3 was followed from 3 (rescaled to 6)",
		detected.Seconds(), sharedSyncPeriod, writers, resolved.Seconds())
}

// waitScalingActive waits until the PodAutoscaler's ScalingActive condition has reason, and
// returns its message.
func waitScalingActive(ctx context.Context, t *testing.T, ns, name, reason string) string {
	t.Helper()
	var msg string
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("PodAutoscaler %s ScalingActive %s", name, reason), func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, name)
		if err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
		if c != nil {
			msg = c.Message
		}
		return c != nil && c.Reason == reason, describeConditions(pa), nil
	})
	return msg
}

// scaleWriters returns the field managers that have written the Deployment's scale subresource.
func scaleWriters(ctx context.Context, t *testing.T, ns, name string) []string {
	t.Helper()
	d, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range d.ManagedFields {
		if m.Subresource == "scale" {
			out = append(out, m.Manager)
		}
	}
	return out
}

// lastScaleWriter returns the manager that wrote the Deployment's scale subresource last.
func lastScaleWriter(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	d, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last string
	var at time.Time
	for _, m := range d.ManagedFields {
		if m.Subresource == "scale" && m.Time != nil && !m.Time.Time.Before(at) {
			last, at = m.Manager, m.Time.Time
		}
	}
	return last
}

// scaleByHand sets the Deployment's replicas through its scale subresource, as kubectl scale does.
func scaleByHand(ctx context.Context, t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	s, err := cluster.Client.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = replicas
	if _, err := cluster.Client.AppsV1().Deployments(ns).UpdateScale(ctx, name, s, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("scale %s to %d: %v", name, replicas, err)
	}
}
