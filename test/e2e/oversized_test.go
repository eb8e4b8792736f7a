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

// readableMessage is the most a condition message or event note about a huge value may take
// to count as readable here: a few lines, not the value.
const readableMessage = 1024

// TestPodAutoscalerWithAHugeSelectorShowsAReadableCondition: the largest selector podpilot
// admits (also sent as the equivalent HPA, dry-run) leaves a PodAutoscaler with a written status
// and a readable condition. Its query is larger than --metrics-max-query-bytes (15 KiB), so the
// metric fails with a condition that says so in a few lines, not the query. (Larger selectors,
// which the HPA admits, are rejected at admission: TestPodAutoscalerSelectorBounds.)
func TestPodAutoscalerWithAHugeSelectorShowsAReadableCondition(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-huge")
	exp := serveExporter(t)
	exp.SetGauge("jobs_queue_length", map[string]string{"namespace": ns, "queue": "jobs"}, 5)
	name := createHugeSelectorTwins(ctx, t, ns, "largest", largestValidSelector())
	pa := waitReadableCondition(ctx, t, ns, name, func(c metav1.Condition) bool {
		return c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "query too large")
	})
	c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
	t.Logf("FIGURE largest admitted selector: ScalingActive=%s (%s), message of %d bytes: %s", c.Status, c.Reason, len(c.Message), c.Message)
	framework.WaitFor(ctx, t, time.Minute, "a readable Warning event on "+name, func(ctx context.Context) (bool, string, error) {
		events, err := cluster.Client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + name})
		if err != nil {
			return false, "", err
		}
		for _, e := range events.Items {
			if e.Type == "Warning" && strings.Contains(e.Note, "query too large") && len(e.Note) <= readableMessage {
				t.Logf("event %s: %s", e.Reason, e.Note)
				return true, "", nil
			}
		}
		return false, fmt.Sprintf("%d events", len(events.Items)), nil
	})
}

// createHugeSelectorTwins starts Deployment name, dry-runs an HPA with an External metric
// narrowed by selector (upstream admits it), creates the same PodAutoscaler on the Deployment and
// returns its name.
func createHugeSelectorTwins(ctx context.Context, t *testing.T, ns, name, selector string) string {
	t.Helper()
	startWorkload(ctx, t, ns, name, 1)
	hpa := hpaYAML(name, "  metrics: [{type: External, external: {metric: {name: jobs_queue_length, selector: "+selector+
		"}, target: {type: Value, value: \"10\"}}}]\n")
	if _, err := cluster.ApplyErr(ctx, ns, []byte(hpa), true); err != nil {
		t.Fatalf("the HPA with the selector is rejected: %.500v", err)
	}
	ppa := framework.PodAutoscalerYAML(name, "deployment", name, 1, 3, "  externalMetrics: [{metricName: jobs_queue_length, selector: "+selector+", targetType: Value, value: \"10\"}]\n")
	if _, err := cluster.ApplyErr(ctx, ns, ppa, false); err != nil {
		t.Fatalf("the PodAutoscaler with the selector is rejected: %.500v", err)
	}
	t.Logf("PodAutoscaler %s: %d bytes", name, len(ppa))
	return name
}

// waitReadableCondition waits until the PodAutoscaler's status is written (the reference and
// replicas kubectl get shows) with a ScalingActive condition ok accepts, whose message is
// readable, and returns the PodAutoscaler.
func waitReadableCondition(ctx context.Context, t *testing.T, ns, name string, ok func(metav1.Condition) bool) *podpilotv1alpha1.PodAutoscaler {
	t.Helper()
	var pa *podpilotv1alpha1.PodAutoscaler
	framework.WaitFor(ctx, t, 2*time.Minute, "PodAutoscaler "+name+" with a readable ScalingActive condition", func(ctx context.Context) (bool, string, error) {
		var err error
		if pa, err = getPodAutoscaler(ctx, t, ns, name); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
		state := fmt.Sprintf("reference %q, replicas %d; ", pa.Status.Reference, pa.Status.CurrentReplicas)
		if c == nil {
			return false, state + "no ScalingActive condition", nil
		}
		done := pa.Status.Reference == "Deployment/"+name && pa.Status.CurrentReplicas == 1 && len(c.Message) <= readableMessage && ok(*c)
		return done, state + fmt.Sprintf("ScalingActive=%s (%s), message of %d bytes: %.300s", c.Status, c.Reason, len(c.Message), c.Message), nil
	})
	return pa
}
