package controller

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/status"
)

// errPrometheusDown is the external metric's source failing.
var errPrometheusDown = errors.New("prometheus: connection refused")

// fallbackAutoscaler scales the seed's deployment (1 to 10 replicas, the behavior's defaults) on
// an external queue with a Value target of 10 and a fallback of 6 replicas after 180 s.
func fallbackAutoscaler(pa *podpilotv1alpha1.PodAutoscaler) {
	pa.Spec.MaxReplicas = 10
	pa.Spec.CustomMetrics, pa.Spec.ResourceMetrics = nil, nil
	pa.Spec.ExternalMetrics = []podpilotv1alpha1.ExternalMetricSpec{{MetricName: "queue_depth", TargetType: podpilotv1alpha1.ValueTarget,
		Value:    ptr.To(resource.MustParse("10")),
		Fallback: &podpilotv1alpha1.ExternalMetricFallback{Replicas: 6, FailureDurationSeconds: ptr.To[int64](180)}}}
	pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{}
}

// fallbackFixture is the seed's deployment at 2 replicas under fallbackAutoscaler, its queue
// served as *queue, or failing while *down.
func fallbackFixture(t *testing.T, queue *string, down *bool) *fixture {
	t.Helper()
	f := newFixture(t, nil, nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(fallbackAutoscaler, checkpointed(2)))...)
	f.external = func(ctx context.Context, namespace string, s labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
		if *down {
			return nil, errPrometheusDown
		}
		return externalValues(*queue)(ctx, namespace, s, info)
	}
	f.restart()
	return f
}

// queueStatus returns the stored status entry of the queue metric.
func queueStatus(f *fixture) podpilotv1alpha1.MetricStatus {
	f.t.Helper()
	for _, m := range f.autoscaler().Status.CurrentMetrics {
		if m.Name == "queue_depth" {
			return m
		}
	}
	f.t.Fatalf("no currentMetrics entry for queue_depth in %+v", f.autoscaler().Status.CurrentMetrics)
	return podpilotv1alpha1.MetricStatus{}
}

// countReason counts the events of reason among reasons ("Type Reason").
func countReason(reasons []string, reason string) int {
	n := 0
	for _, r := range reasons {
		if r == "Normal "+reason {
			n++
		}
	}
	return n
}

func TestAnExternalMetricFailingForFailureDurationSecondsProposesItsFallbackUntilItIsReadAgain(t *testing.T) {
	queue, down := "10", false
	f := fallbackFixture(t, &queue, &down)
	if err := f.sync(); err != nil || f.replicas("") != 2 {
		t.Fatalf("round 0: %v, %d replicas; want 2", err, f.replicas(""))
	}
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionExternalMetricFallbackActive); got != "False "+status.ReasonMetricsAvailable {
		t.Errorf("condition while read = %s, want False %s", got, status.ReasonMetricsAvailable)
	}
	down = true
	f.clock.Step(15 * time.Second)
	firstFailure := f.clock.Now()
	var rounds []int32
	for f.clock.Since(firstFailure) < 180*time.Second {
		_ = f.sync()
		rounds = append(rounds, f.replicas(""))
		if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionExternalMetricFallbackActive); got != "False "+status.ReasonFallbackPending {
			t.Fatalf("condition %s after the first failure = %s, want False %s", f.clock.Since(firstFailure), got, status.ReasonFallbackPending)
		}
		f.clock.Step(15 * time.Second)
	}
	if slices.Max(rounds) != 2 {
		t.Fatalf("replicas %v before failureDurationSeconds, want 2 throughout", rounds)
	}
	if ms := queueStatus(f); ms.FirstFailureTime == nil || !ms.FirstFailureTime.Time.Equal(firstFailure) || ms.FallbackStatus != podpilotv1alpha1.FallbackNormal {
		t.Fatalf("queue status %+v, want firstFailureTime %s and fallbackStatus Normal", ms, firstFailure)
	}
	_ = f.sync() // 180 s after the first failure
	if got := f.replicas(""); got != 6 {
		t.Fatalf("replicas 180 s after the first failure = %d, want the fallback's 6 (2 + 4 within the default scale-up policy)", got)
	}
	pa := f.autoscaler()
	if got := condition(pa, podpilotv1alpha1.ConditionExternalMetricFallbackActive); got != "True "+status.ReasonFallbackActive {
		t.Errorf("condition = %s, want True %s", got, status.ReasonFallbackActive)
	}
	if ms := queueStatus(f); ms.FallbackStatus != podpilotv1alpha1.FallbackActive {
		t.Errorf("fallbackStatus = %q, want Fallback", ms.FallbackStatus)
	}
	if pa.Status.Targets != "<fallback 6>/10" {
		t.Errorf("targets = %q, want <fallback 6>/10", pa.Status.Targets)
	}
	for range 3 { // the fallback holds, and is announced once
		f.clock.Step(15 * time.Second)
		_ = f.sync()
	}
	reasons, lines := f.events()
	if n := countReason(reasons, status.ReasonFallbackActivated); n != 1 {
		t.Errorf("%d %s events, want 1: %v", n, status.ReasonFallbackActivated, lines)
	}
	down, queue = false, "5" // read again: 5/10 of 6 proposes 3, held by the 300 s scale-down window
	f.clock.Step(15 * time.Second)
	if err := f.sync(); err != nil || f.replicas("") != 6 {
		t.Fatalf("round after the metric returned: %v, %d replicas; want 6 (stabilized)", err, f.replicas(""))
	}
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionExternalMetricFallbackActive); got != "False "+status.ReasonMetricsAvailable {
		t.Errorf("condition once read again = %s, want False %s", got, status.ReasonMetricsAvailable)
	}
	if ms := queueStatus(f); ms.FirstFailureTime != nil || ms.FallbackStatus != podpilotv1alpha1.FallbackNormal {
		t.Errorf("queue status once read again %+v, want no firstFailureTime and fallbackStatus Normal", ms)
	}
	if reasons, lines := f.events(); countReason(reasons, status.ReasonFallbackDeactivated) != 1 {
		t.Errorf("events once read again %v, want one %s", lines, status.ReasonFallbackDeactivated)
	}
}

func TestAPodAutoscalerWithoutAFallbackHasNoFallbackConditionAndHoldsOnFailure(t *testing.T) {
	queue, down := "10", true
	f := fallbackFixture(t, &queue, &down)
	pa := f.autoscaler()
	pa.Spec.ExternalMetrics[0].Fallback = nil
	if _, err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).Update(t.Context(), pa, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		_ = f.sync()
		f.clock.Step(15 * time.Second)
	}
	if got := f.replicas(""); got != 2 {
		t.Errorf("replicas after 300 s of failures without a fallback = %d, want 2", got)
	}
	if got := condition(f.autoscaler(), podpilotv1alpha1.ConditionExternalMetricFallbackActive); got != "<none>" {
		t.Errorf("condition = %s, want none without a fallback", got)
	}
	if ms := queueStatus(f); ms.FirstFailureTime != nil || ms.FallbackStatus != "" {
		t.Errorf("queue status %+v, want no fallback fields without a fallback", ms)
	}
}

// A new leader counts the failure from the checkpointed firstFailureTime: the fallback comes
// 180 s after the first failure, whoever leads. A start whose status write failed is not in the
// checkpoint: the new leader then counts from its own first failed round, later, never sooner.
func TestANewLeaderCountsTheFailureFromTheCheckpointAndNeverSooner(t *testing.T) {
	for _, lost := range []bool{false, true} {
		name := "the first failure's status write landed"
		if lost {
			name = "every status write since the first failure failed"
		}
		t.Run(name, func(t *testing.T) {
			queue, down := "10", false
			f := fallbackFixture(t, &queue, &down)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if lost {
				denyStatus(f, func() bool { return down })
			}
			down = true
			f.clock.Step(15*time.Second + 500*time.Millisecond) // a start within a second: status keeps whole seconds
			firstFailure := f.clock.Now()
			for f.clock.Since(firstFailure) < 120*time.Second {
				_ = f.sync()
				f.clock.Step(15 * time.Second)
			}
			f.restart() // a new leader, 120 s into the failure
			restarted := f.clock.Now()
			fired := time.Duration(-1)
			// Rounds at 120 s, 179.6 s, then every 5 s: the round at 179.6 s would fall back if
			// the checkpoint's whole second were rounded down (to 0.5 s before the first failure).
			for step := 59600 * time.Millisecond; f.clock.Since(firstFailure) < 400*time.Second && fired < 0; step = 5 * time.Second {
				_ = f.sync()
				if f.replicas("") > 2 {
					fired = f.clock.Since(firstFailure)
				}
				f.clock.Step(step)
			}
			earliest := 180 * time.Second
			if lost {
				earliest = restarted.Add(180 * time.Second).Sub(firstFailure)
			}
			if fired < earliest || fired > earliest+5*time.Second {
				t.Errorf("fallback %s after the first failure, want it at the first round from %s on", fired, earliest)
			}
		})
	}
}

// The same leader counts from its memory when the status writes fail: the fallback comes on time.
func TestTheSameLeaderFallsBackOnTimeWhenEveryStatusWriteFails(t *testing.T) {
	queue, down := "10", false
	f := fallbackFixture(t, &queue, &down)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	denyStatus(f, func() bool { return true })
	down = true
	f.clock.Step(15 * time.Second)
	firstFailure := f.clock.Now()
	for f.clock.Since(firstFailure) <= 180*time.Second {
		_ = f.sync()
		if got := f.replicas(""); (got > 2) != (f.clock.Since(firstFailure) >= 180*time.Second) {
			t.Fatalf("%d replicas %s after the first failure, want the fallback from 180 s on", got, f.clock.Since(firstFailure))
		}
		f.clock.Step(15 * time.Second)
	}
}
