//go:build faults

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Fault 4 runs with the long faults (make test-faults): after the outage
// every client's informers wait out client-go's watch backoff (exponential
// from 0.8 s to 30 s, with jitter) before they list again, so the new pods
// ran 24 s after the restart (kube-controller-manager and kwok) and podpilot
// served their values 30 s after that (its pod informer's own backoff). The
// test measures the two parts apart; the rescale itself follows at once.

// TestFaultAPIServerRestart (fault 4): the kube-apiserver is stopped for 20 s
// while the load asks for more replicas, then started again on the same etcd.
// The shared podpilot keeps running (same process), its informers resume, the
// APIServices come back Available, its next round scales correctly and the
// PodAutoscaler's history from before the outage is still in its status.
func TestFaultAPIServerRestart(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "fault-apiserver")
	startWorkload(ctx, t, ns, "target", 1)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "target", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(4000) // 2 replicas
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 5, "zdns_vanguard_qps", "2000",
		// Windows and periods of 10 minutes keep all of the history the test compares.
		"  behavior:\n    scaleDown: {stabilizationWindowSeconds: 600}\n    scaleUp: {policies: [{type: Pods, value: 4, periodSeconds: 600}]}\n"))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "target", 2)
	before, err := getPodAutoscaler(ctx, t, ns, "target")
	if err != nil {
		t.Fatal(err)
	}
	pid := metricsServer.Pid()

	restart, err := cluster.StopAPIServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	load.Set(8000) // 4 replicas, read once the apiserver is back
	select {       // the outage itself, not an assertion
	case <-time.After(20 * time.Second):
	case <-ctx.Done():
	}
	if metricsServer.Exited() {
		t.Fatalf("podpilot exited while the apiserver was down; log:\n%s", metricsServer.LogTail(4000))
	}
	started := time.Now()
	if err := restart(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	ready := time.Since(started)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "target", 4)
	rescaled := time.Since(started)
	for _, name := range framework.MetricsAPIServices {
		framework.WaitFor(ctx, t, time.Minute, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return cluster.APIServiceAvailable(ctx, name)
		})
	}
	// The rest of the cluster recovers at its own pace: kube-controller-manager
	// and kwok reconnect with client-go's watch backoff (up to ~30 s with
	// jitter after a 20 s outage) before the new pods exist and run. That
	// time is theirs, so it is measured apart from podpilot's.
	framework.WaitFor(ctx, t, 3*time.Minute, "4 pods of target running (kube-controller-manager and kwok reconnected)", func(ctx context.Context) (bool, string, error) {
		pods, err := cluster.RunningPods(ctx, ns, "target")
		return len(pods) == 4, fmt.Sprintf("%d running", len(pods)), err
	})
	running := time.Now()
	// The pod informer resumed: the new pods are served through the aggregator.
	framework.WaitFor(ctx, t, 2*time.Minute, "values for the 4 pods through the aggregator", func(ctx context.Context) (bool, string, error) {
		l, err := getMetrics(ctx, podsMetricPath(ns, "zdns_vanguard_qps"))
		if err != nil {
			return false, "", err
		}
		return len(l.Items) == 4, fmt.Sprint(l.podValues()), nil
	})
	served := time.Since(running)
	after, err := getPodAutoscaler(ctx, t, ns, "target")
	if err != nil {
		t.Fatal(err)
	}
	kept := assertHistoryKept(t, before, after)
	if metricsServer.Pid() != pid || metricsServer.Exited() {
		t.Errorf("podpilot was restarted (pid %d → %d, exited %v)", pid, metricsServer.Pid(), metricsServer.Exited())
	}
	reportFault(t, "apiserver-restart", "podpilot kept running (pid %d); apiserver ready (/readyz ok) %s after its restart, first correct rescale (2 → 4) seen %s after its restart (%s after ready; podpilot reconnects before /readyz says ok); the cluster ran the 2 new pods %s after the restart, podpilot served their values %s later; %s",
		pid, ready.Round(time.Millisecond), rescaled.Round(time.Millisecond), (rescaled - ready).Round(time.Millisecond),
		running.Sub(started).Round(time.Millisecond), served.Round(time.Millisecond), kept)
}

// assertHistoryKept checks that every recommendation and scale event of
// before is still in after's status (the windows are long enough to keep
// them all), and describes what it compared.
func assertHistoryKept(t *testing.T, before, after *podpilotv1alpha1.PodAutoscaler) string {
	t.Helper()
	// Recommendations are stored as runs of equal values (docs/how-it-decides.md, "History as
	// runs"): a run is re-dated to its last round when it ends, so a kept
	// recommendation has the same replicas and a timestamp no earlier.
	lost := 0
	for _, r := range before.Status.Recommendations {
		if !slices.ContainsFunc(after.Status.Recommendations, func(a podpilotv1alpha1.Recommendation) bool {
			return a.Replicas == r.Replicas && !a.Timestamp.Before(&r.Timestamp)
		}) {
			lost++
		}
	}
	events := map[string]bool{}
	var beforeUp []podpilotv1alpha1.ScaleEvent
	if after.Status.ScaleEvents != nil {
		for _, e := range after.Status.ScaleEvents.ScaleUp {
			events[fmt.Sprintf("%d@%s", e.ReplicaChange, e.Timestamp.UTC().Format(time.RFC3339))] = true
		}
	}
	if before.Status.ScaleEvents != nil {
		beforeUp = before.Status.ScaleEvents.ScaleUp
	}
	for _, e := range beforeUp {
		if !events[fmt.Sprintf("%d@%s", e.ReplicaChange, e.Timestamp.UTC().Format(time.RFC3339))] {
			lost++
		}
	}
	if lost > 0 || len(before.Status.Recommendations) == 0 || len(beforeUp) == 0 {
		t.Errorf("history lost: %d entries of before %+v missing in after %+v", lost, before.Status, after.Status)
	}
	return fmt.Sprintf("history kept: %d recommendations and %d scale-up events from before the outage, %d lost",
		len(before.Status.Recommendations), len(beforeUp), lost)
}
