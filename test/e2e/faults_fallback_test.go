package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// fallbackDuration is the fallback's failureDurationSeconds in the fallback test: KEP-5679's
// minimum, and its default.
const fallbackDuration = 180 * time.Second

// fallbackAutoscalerYAML is a PodAutoscaler named fallback scaling Deployment worker between 1
// and 8 on the external metric jobs_backlog (Value 10), with a fallback of 5 replicas after
// fallbackDuration and no scale-down window.
var fallbackAutoscalerYAML = framework.PodAutoscalerYAML("fallback", "deployment", "worker", 1, 8, fmt.Sprintf(`  externalMetrics:
  - metricName: jobs_backlog
    targetType: Value
    value: "10"
    fallback: {replicas: 5, failureDurationSeconds: %d}
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
`, int(fallbackDuration/time.Second)))

// TestFaultExternalMetricFallback (KEP-5679): Prometheus answers 500 to every query, so the
// External metric fails. The PodAutoscaler holds 2 replicas with ExternalMetricFallbackActive
// False (FallbackPending) and firstFailureTime set; podpilot is restarted 90 s into the failure
// (a new leader, counting from the checkpointed firstFailureTime); at failureDurationSeconds the
// fallback's 5 replicas are proposed and applied (condition True, fallbackStatus Fallback, one
// ExternalMetricFallbackActivated event), never sooner; once Prometheus answers again the
// fallback ends and the metric scales the target (5/10 of 5 pods: 3).
func TestFaultExternalMetricFallback(t *testing.T) {
	ctx := t.Context()
	proxy := cluster.StartPrometheusProxy(t)
	extra := []string{"--prometheus-url=" + proxy.URL, "--prometheus-timeout=2s", shareMaxAgeArg}
	p := takeOver(ctx, t, 1, extra...)[0]
	ns := cluster.CreateNamespace(ctx, t, "fault-fallback")
	startWorkload(ctx, t, ns, "worker", 2)
	exp := serveExporter(t)
	backlog := map[string]string{"namespace": ns}
	exp.SetGauge("jobs_backlog", backlog, 10) // 10/10 of 2 pods: 2
	applyPodAutoscaler(ctx, t, ns, fallbackAutoscalerYAML)
	waitPodAutoscalerCondition(ctx, t, ns, "fallback", "ScalingActive", metav1.ConditionTrue)
	waitFallbackCondition(ctx, t, ns, metav1.ConditionFalse, "MetricsAvailable")

	proxy.Set(framework.Fault{Status: http.StatusInternalServerError})
	outlastSharedAnswers()
	pa := waitFallbackCondition(ctx, t, ns, metav1.ConditionFalse, "FallbackPending")
	first := firstFailureOf(t, pa)
	cluster.HoldReplicas(ctx, t, time.Until(first.Add(90*time.Second)), "Deployment", ns, "worker", 2)

	// A new leader 90 s into the failure. It is not ready (/readyz waits for a metrics discovery
	// pass, which needs Prometheus) until the fault is lifted; its autoscaler runs meanwhile.
	p.Stop()
	p = cluster.StartPodpilot(t, podpilotBinary, append(sharedArgs(), extra...)...)
	cluster.HoldReplicas(ctx, t, time.Until(first.Add(fallbackDuration-2*time.Second)), "Deployment", ns, "worker", 2)
	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, "worker", 5)
	fired := time.Since(first)
	if fired < fallbackDuration {
		t.Errorf("fallback %s after the first failure, want no sooner than %s", fired, fallbackDuration)
	}
	pa = waitFallbackCondition(ctx, t, ns, metav1.ConditionTrue, "FallbackActive")
	if got := externalStatus(pa).FallbackStatus; got != podpilotv1alpha1.FallbackActive {
		t.Errorf("fallbackStatus = %q, want Fallback", got)
	}
	framework.WaitFor(ctx, t, 30*time.Second, "an ExternalMetricFallbackActivated event", func(ctx context.Context) (bool, string, error) {
		n := countEvents(ctx, t, ns, "PodAutoscaler", "fallback", "ExternalMetricFallbackActivated")
		return n >= 1, fmt.Sprintf("%d events", n), nil
	})

	exp.SetGauge("jobs_backlog", backlog, 5) // 5/10 of 5 pods: 3
	proxy.Set(framework.Fault{})
	lifted := time.Now()
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := cluster.RegisterMetricsAPIs(ctx, p.Port); err != nil {
		t.Fatal(err)
	}
	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, "worker", 3)
	pa = waitFallbackCondition(ctx, t, ns, metav1.ConditionFalse, "MetricsAvailable")
	if ms := externalStatus(pa); ms.FirstFailureTime != nil || ms.FallbackStatus != podpilotv1alpha1.FallbackNormal {
		t.Errorf("external metric status once read again %+v, want fallbackStatus Normal without firstFailureTime", ms)
	}
	if n := countEvents(ctx, t, ns, "PodAutoscaler", "fallback", "ExternalMetricFallbackActivated"); n != 1 {
		t.Errorf("%d ExternalMetricFallbackActivated events, want 1: one per fallback", n)
	}
	framework.WaitFor(ctx, t, 30*time.Second, "an ExternalMetricFallbackDeactivated event", func(ctx context.Context) (bool, string, error) {
		n := countEvents(ctx, t, ns, "PodAutoscaler", "fallback", "ExternalMetricFallbackDeactivated")
		return n >= 1, fmt.Sprintf("%d events", n), nil
	})
	assertNoPanic(t, p)
	reportFault(t, "external-metric-fallback", "Prometheus answering 500: held 2 replicas, then the fallback's 5 at %s after the first failure (failureDurationSeconds %s, podpilot restarted at 90 s); the metric read again scaled to 3 %s after the fault was lifted",
		fired.Round(100*time.Millisecond), fallbackDuration, time.Since(lifted).Round(100*time.Millisecond))
}

// waitFallbackCondition waits until the PodAutoscaler fallback's ExternalMetricFallbackActive
// condition has status and reason, and returns it as stored then.
func waitFallbackCondition(ctx context.Context, t *testing.T, ns string, status metav1.ConditionStatus, reason string) *podpilotv1alpha1.PodAutoscaler {
	t.Helper()
	var pa *podpilotv1alpha1.PodAutoscaler
	framework.WaitFor(ctx, t, 2*time.Minute, fmt.Sprintf("ExternalMetricFallbackActive=%s (%s)", status, reason), func(ctx context.Context) (bool, string, error) {
		var err error
		if pa, err = getPodAutoscaler(ctx, t, ns, "fallback"); err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionExternalMetricFallbackActive)
		return c != nil && c.Status == status && c.Reason == reason, describeConditions(pa), nil
	})
	return pa
}

// externalStatus returns pa's status entry of jobs_backlog.
func externalStatus(pa *podpilotv1alpha1.PodAutoscaler) podpilotv1alpha1.MetricStatus {
	for _, m := range pa.Status.CurrentMetrics {
		if m.Type == podpilotv1alpha1.ExternalMetricSourceType && m.Name == "jobs_backlog" {
			return m
		}
	}
	return podpilotv1alpha1.MetricStatus{}
}

// firstFailureOf returns pa's firstFailureTime of jobs_backlog.
func firstFailureOf(t *testing.T, pa *podpilotv1alpha1.PodAutoscaler) time.Time {
	t.Helper()
	ms := externalStatus(pa)
	if ms.FirstFailureTime == nil {
		t.Fatalf("no firstFailureTime while the condition is FallbackPending: %+v", pa.Status.CurrentMetrics)
	}
	return ms.FirstFailureTime.Time
}
