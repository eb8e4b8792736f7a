package controller

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

func TestRunScalesAnAutoscalerSeenByItsInformer(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	ctx, cancel := context.WithCancel(t.Context())
	f.kubeInf.Start(ctx.Done())
	f.ppInf.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- f.ctrl.Run(ctx) }()

	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return f.replicas("") == 3, nil
	})
	if err != nil {
		t.Errorf("deployment not scaled to 3: %v", err)
	}
	if err := f.ctrl.Run(ctx); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil after the context ends", err)
	}
	f.kubeInf.Shutdown()
	f.ppInf.Shutdown()
}

func TestRunFailsWhenCachesDoNotSync(t *testing.T) {
	f := newFixture(t, nil, nil, seedAutoscaler())
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	// The factories are never started, so the caches never sync.
	if err := f.ctrl.Run(ctx); !errors.Is(err, ErrCacheSync) {
		t.Errorf("Run = %v, want ErrCacheSync", err)
	}
}

func TestLivenessFailsOnlyWhenTheLoopMakesNoProgressForThreeRoundDeadlines(t *testing.T) {
	f := newFixture(t, nil, nil)
	check := f.ctrl.Healthz()
	if err := check.Check(nil); err != nil {
		t.Errorf("not running: %v, want healthy (no leadership is not a failure)", err)
	}
	f.ctrl.running.Store(true)
	f.ctrl.tick()
	// A round has one sync period to finish (its deadline), so a slow source delays a tick by at
	// most that: the check allows three.
	f.clock.Step(3 * DefaultSyncPeriod)
	if err := check.Check(nil); err != nil {
		t.Errorf("ticked three round deadlines ago: %v, want healthy", err)
	}
	f.clock.Step(time.Second)
	if err := check.Check(nil); err == nil {
		t.Error("no progress for more than three round deadlines: healthy, want a failure")
	}
}

// TestFaultLivenessPassesWhileTheMetricSourceHangs: a custom metrics source and a sample-time
// source that never answer (a hung Prometheus) make every round of a PodAutoscaler with three
// Prometheus metrics fail them at the round's deadline, and the loop keeps making progress, so
// the liveness check passes throughout: a slow dependency never gets podpilot restarted. Checked
// every 100 ms for eight sync periods of 1 s; the figure is printed, and asserted under the faults
// build tag. (The base commit read the three one after another, each bounded by one sync period,
// then asked for the scrape cadence on the worker: about four periods per round, against a
// liveness limit of one and a half.)
func TestFaultLivenessPassesWhileTheMetricSourceHangs(t *testing.T) {
	hung := customFunc(func(ctx context.Context, _ string, _ labels.Selector, _ provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	threeMetrics := func(pa *podpilotv1alpha1.PodAutoscaler) {
		for _, name := range []string{"zdns_vanguard_errors", "zdns_vanguard_latency"} {
			pa.Spec.CustomMetrics = append(pa.Spec.CustomMetrics, podpilotv1alpha1.CustomMetricSpec{MetricName: name, AverageValue: resource.MustParse("1")})
		}
	}
	f := newFixture(t, hung, nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2), threeMetrics))...)
	opts := *NewOptions()
	opts.SyncPeriod = time.Second
	var failures int
	var worst time.Duration
	f.runReal(Config{Options: opts, CustomSource: hung, SampleTimes: hungLandings{}}, func(ctrl *Controller) {
		check := ctrl.Healthz()
		for end := time.Now().Add(8 * opts.SyncPeriod); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if err := check.Check(nil); err != nil {
				failures++
			}
			if ctrl.running.Load() {
				worst = max(worst, time.Since(ctrl.LastTick()))
			}
		}
	})
	pa := f.autoscaler()
	fmt.Printf("FIGURE liveness-hung-source: %d liveness failures in %s with a metric source that never answers; longest time without progress %s (limit %s); ScalingActive %s\n",
		failures, 8*opts.SyncPeriod, worst.Round(10*time.Millisecond), opts.livenessLimit(), condition(pa, podpilotv1alpha1.ConditionScalingActive))
	checkTiming(t, failures == 0, "%d liveness failures while the metric source hung", failures)
	if got := condition(pa, podpilotv1alpha1.ConditionScalingActive); got != "False FailedGetPodsMetric" {
		t.Errorf("ScalingActive = %s, want the metric failing at the round's deadline", got)
	}
}

// hungLandings is a SampleTimeSource that never answers.
type hungLandings struct{}

func (hungLandings) LastSample(ctx context.Context, _ string, _ provider.CustomMetricInfo, _ labels.Selector) (time.Time, error) {
	<-ctx.Done()
	return time.Time{}, ctx.Err()
}

func (hungLandings) LastExternalSample(ctx context.Context, _ string, _ labels.Selector, _ provider.ExternalMetricInfo) (time.Time, error) {
	<-ctx.Done()
	return time.Time{}, ctx.Err()
}
