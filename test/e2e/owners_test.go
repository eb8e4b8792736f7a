package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestPodAutoscalerCountsOnlyItsTargetsOwnPods runs two Deployments whose pod labels overlap:
// web selects app=web, and web-canary's pods carry app=web too (kubernetes/kubernetes#124307).
// The PodAutoscaler on web must average its own 2 pods (1000 each, on target), not the canary's
// (4000 each), which would make upstream propose 10 replicas; and it must say so, once.
func TestPodAutoscalerCountsOnlyItsTargetsOwnPods(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-owners")
	own := startWorkload(ctx, t, ns, "web", 2)
	canary := cluster.Deployment("web-canary", 2)
	canaryLabels := map[string]string{"app": "web", "track": "canary"}
	canary.Spec.Selector.MatchLabels, canary.Spec.Template.Labels = canaryLabels, canaryLabels
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, canary, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment web-canary: %v", err)
	}
	foreign := runningPodsBySelector(ctx, t, ns, "app=web,track=canary", 2)
	exp := serveExporter(t)
	for _, p := range own {
		if slices.Contains(foreign, p) {
			t.Fatalf("startWorkload returned canary pod %s as web's", p)
		}
		exp.SetGauge("zdns_vanguard_qps", map[string]string{"namespace": ns, "pod": p}, 1000)
	}
	for _, p := range foreign {
		exp.SetGauge("zdns_vanguard_qps", map[string]string{"namespace": ns, "pod": p}, 4000)
	}
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("web", "deployment", "web", 1, 10, "zdns_vanguard_qps", "1000", ""))

	framework.WaitFor(ctx, t, time.Minute, "PodAutoscaler web to read the average of its own pods", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "web")
		if err != nil {
			return false, "", err
		}
		ok := len(pa.Status.CurrentMetrics) == 1 && pa.Status.CurrentMetrics[0].AverageValue != nil
		return ok && pa.Status.CurrentMetrics[0].AverageValue.MilliValue() == 1000_000, describeConditions(pa), nil
	})
	t.Cleanup(func() { logLastDecision(t, ns, "web") })
	// 4 rounds of the shared podpilot (sync period 2 s): the average of all 4 matching pods,
	// 2500, would scale to 10.
	cluster.HoldReplicas(ctx, t, 8*time.Second, "Deployment", ns, "web", 2)

	pa, err := getPodAutoscaler(ctx, t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionSelectorOverlap)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != "ForeignPodsIgnored" ||
		!strings.Contains(c.Message, "2 pods match the selector of Deployment/web") || !strings.Contains(c.Message, "Deployment/web-canary") {
		t.Errorf("SelectorOverlap = %+v, want True ForeignPodsIgnored naming 2 pods and Deployment/web-canary", c)
	}
	if n := eventOccurrences(ctx, t, ns, "web", "ForeignPodsIgnored"); n != 1 {
		t.Errorf("%d ForeignPodsIgnored events over several rounds, want 1 (one per change)", n)
	}
	t.Logf("status.currentMetrics average %s over the own pods %v (foreign pods %v at 4000 ignored); %s",
		pa.Status.CurrentMetrics[0].AverageValue, own, foreign, c.Message)
}

// logLastDecision logs, when t failed, the PodAutoscaler's last decision that changed the
// replicas (each proposal, the winner, what changed it), its metrics and conditions: what made it
// scale. It runs in a cleanup, after t's context has ended.
func logLastDecision(t *testing.T, ns, name string) {
	if !t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pa, err := getPodAutoscaler(ctx, t, ns, name)
	if err != nil {
		t.Logf("PodAutoscaler %s/%s: %v", ns, name, err)
		return
	}
	t.Logf("PodAutoscaler %s/%s: lastDecision %+v; currentMetrics %+v; %s", ns, name, pa.Status.LastDecision, pa.Status.CurrentMetrics, describeConditions(pa))
}

// runningPodsBySelector waits until n pods matching selector in ns run, and returns their names.
func runningPodsBySelector(ctx context.Context, t *testing.T, ns, selector string, n int) []string {
	t.Helper()
	var names []string
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("%d pods %s running", n, selector), func(ctx context.Context) (bool, string, error) {
		list, err := cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, "", err
		}
		names = names[:0]
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == "Running" {
				names = append(names, p.Name)
			}
		}
		return len(names) == n, fmt.Sprintf("%d running", len(names)), nil
	})
	slices.Sort(names)
	return names
}

// eventOccurrences counts the events of reason on the PodAutoscaler named name in ns (not on an
// HPA or a Deployment of the same name), a repeated event (a series) as many times as it occurred.
func eventOccurrences(ctx context.Context, t *testing.T, ns, name, reason string) int {
	t.Helper()
	events, err := cluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=PodAutoscaler,involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		if e.Reason != reason {
			continue
		}
		switch {
		case e.Series != nil:
			n += int(e.Series.Count)
		case e.Count > 0:
			n += int(e.Count)
		default:
			n++
		}
	}
	return n
}
