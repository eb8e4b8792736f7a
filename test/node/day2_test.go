package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Day 2 on the real node (issue 19 §5): podpilot installed by its chart,
// real pods, the faults injected by the harness. Each test prints its
// figures on lines starting "NODE"; timed promises are asserted only under
// the faults tag (strictTiming), as in test/e2e's fault suite.

// reportNode prints a figure line (framework.Report, kind NODE).
func reportNode(t *testing.T, name, format string, args ...any) {
	t.Helper()
	framework.Report(t, "NODE", name, format, args...)
}

// checkTiming asserts a timed promise only under the faults tag.
func checkTiming(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	framework.CheckTiming(t, strictTiming, ok, "-tags faults", format, args...)
}

// TestLeaderPodDeletedMidWindow deletes the pod holding podpilot's Lease in
// the middle of a downscale stabilization window. The other replica takes
// the Lease, seeds its history from the PodAutoscaler's status and the
// target's replicas, and scales down once: never before the window from the
// last round that recommended 4 ends, never twice, and within two sync
// periods after the window from its own first round (which records the
// target's 4, as upstream seeds a newly seen HPA). The first window
// counts, as upstream's does, from the last round that recommended 4: the
// leader's checkpoint in status, read before the leader is deleted, dates it
// (to the second, rounded up); that round may precede the load's fall by up
// to a sync period, having read the load before it fell.
func TestLeaderPodDeletedMidWindow(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	const window = 40 * time.Second
	s := newScaled(ctx, t, 1, 400, window, 4)
	rec := s.record(ctx)
	s.load.Set(100) // recommends 1 from now on; the window holds 4 until its last round+window
	dropped := time.Now()
	framework.WaitFor(ctx, t, window, "15s into the window", func(context.Context) (bool, string, error) {
		return time.Since(dropped) >= 15*time.Second, "", nil
	})
	// The history the leader checkpointed, read before it dies: the newest
	// run is the recommendation of 1, so the run of 4 has ended and its last
	// round is written down.
	var lastHigh time.Time
	framework.WaitFor(ctx, t, 10*time.Second, "the leader's checkpoint to show the run of 4 ended", func(ctx context.Context) (bool, string, error) {
		pa, err := s.podAutoscaler(ctx)
		if err != nil {
			return false, "", err
		}
		recs := pa.Status.Recommendations
		if len(recs) == 0 || recs[len(recs)-1].Replicas != 1 {
			return false, fmt.Sprintf("recommendations %v", recs), nil
		}
		lastHigh = framework.LastRecommendedAbove(t, recs, 1)
		return true, "", nil
	})
	if cut := dropped.Add(-2 * syncPeriod).Sub(lastHigh); cut > 0 {
		t.Errorf("the checkpoint dates the last recommendation of 4 %.1fs before the load fell: more than a sync period (%s) early, the run was cut short", (cut + 2*syncPeriod).Seconds(), syncPeriod)
	}
	windowEnd := lastHigh.Add(window)
	leader, err := leaseHolder(ctx)
	if err != nil || leader == "" {
		t.Fatalf("no Lease holder (%v)", err)
	}
	deleted := time.Now()
	if err := cluster.Client.CoreV1().Pods(podpilotNS).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var takeover time.Duration
	framework.WaitFor(ctx, t, time.Minute, "another replica holds the Lease", func(ctx context.Context) (bool, string, error) {
		holder, err := leaseHolder(ctx)
		if err != nil || holder == "" || holder == leader {
			return false, "holder " + holder, nil
		}
		pods, err := podpilotPods(ctx)
		for _, p := range pods {
			if p.Name == holder {
				takeover = time.Since(deleted)
				return true, "", err
			}
		}
		return false, "holder " + holder + " is not a live pod", err
	})
	cluster.WaitReplicas(ctx, t, window+time.Minute, "Deployment", s.ns, s.name, 1)
	// The new leader's first round records the target's replicas (4) as a recommendation, as
	// upstream seeds a newly seen HPA, so the window ends a window after that round at the
	// latest: its checkpoint dates it.
	pa, err := s.podAutoscaler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	termEnd := framework.LastRecommendedAbove(t, pa.Status.Recommendations, 1).Add(window)
	// Watch a while longer for a second scale.
	framework.WaitFor(ctx, t, time.Minute, "20s after the window", func(context.Context) (bool, string, error) {
		return time.Since(termEnd) >= 20*time.Second, "", nil
	})
	changes := rec.Stop()
	reportNode(t, "leader-deleted", "leader %s deleted %.1fs into a %s window; Lease taken over in %.1fs; last recommendation of 4 at %+.1fs (checkpoint); replicas: %s",
		leader, deleted.Sub(dropped).Seconds(), window, takeover.Seconds(), lastHigh.Sub(dropped).Seconds(), describeChanges(changes, dropped))
	if len(changes) != 2 || changes[0].replicas != 4 || changes[1].replicas != 1 {
		t.Fatalf("want 4 then one scale-down to 1, got: %s", describeChanges(changes, dropped))
	}
	if early := windowEnd.Sub(changes[1].at); early > 0 {
		t.Errorf("scaled down %.1fs before the stabilization window (%s after the last recommendation of 4, at %+.1fs) ended", early.Seconds(), window, lastHigh.Sub(dropped).Seconds())
	}
	late := changes[1].at.Sub(termEnd)
	checkTiming(t, late <= 2*syncPeriod+3*time.Second, "scale-down %.1fs after the window from the new leader's first round ended, want within 2 sync periods + 3s", late.Seconds())
}

// TestHelmUpgradeRollsBothReplicas upgrades the release to a rebuilt image
// while a PodAutoscaler holds a workload: both replicas roll, the replicas
// are held, the history in status survives, and the APIServices stay
// Available (or the test says for how long they were not).
func TestHelmUpgradeRollsBothReplicas(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	s := newScaled(ctx, t, 1, 300, 5*time.Minute, 3)
	tag := imageTag + "-upgrade"
	rebuildImage(ctx, t, tag)
	before, err := s.podAutoscaler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldPods, err := podpilotPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.record(ctx)
	avail := watchAPIServices(ctx)
	start := time.Now()
	helmInstall(ctx, t, tag)
	rolled := time.Since(start)
	// Keep watching through the old pods' termination.
	framework.WaitFor(ctx, t, time.Minute, "the old pods gone", func(ctx context.Context) (bool, string, error) {
		for _, p := range oldPods {
			if _, err := cluster.Client.CoreV1().Pods(podpilotNS).Get(ctx, p.Name, metav1.GetOptions{}); err == nil {
				return false, p.Name + " still there", nil
			}
		}
		return true, "", nil
	})
	outage := avail.Stop()
	changes := rec.Stop()
	reportNode(t, "helm-upgrade", "rolled in %.1fs; APIServices unavailable %s; workload replicas: %s",
		rolled.Seconds(), outage, describeChanges(changes, start))
	if len(changes) != 1 || changes[0].replicas != 3 {
		t.Errorf("replicas not held at 3 through the upgrade: %s", describeChanges(changes, start))
	}
	pods, err := podpilotPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if img := p.Spec.Containers[0].Image; img != "localhost/podpilot/podpilot:"+tag {
			t.Errorf("pod %s runs %s after the upgrade", p.Name, img)
		}
		for _, old := range oldPods {
			if old.Name == p.Name {
				t.Errorf("pod %s was not replaced", p.Name)
			}
		}
	}
	after, err := s.podAutoscaler(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkHistoryKept(t, before.Status.Recommendations, after.Status.Recommendations)
	if before.Status.ScaleEvents != nil && (after.Status.ScaleEvents == nil || len(after.Status.ScaleEvents.ScaleUp) < len(before.Status.ScaleEvents.ScaleUp)) {
		t.Errorf("scale-up events lost in the upgrade: before %+v, after %+v", before.Status.ScaleEvents, after.Status.ScaleEvents)
	}
}

// checkHistoryKept checks that the oldest recommendation before the upgrade
// is still in the status after it.
func checkHistoryKept(t *testing.T, before, after []podpilotv1alpha1.Recommendation) {
	t.Helper()
	if len(before) == 0 {
		t.Fatal("no recommendations in status before the upgrade")
	}
	for _, r := range after {
		if r.Timestamp.Equal(&before[0].Timestamp) && r.Replicas == before[0].Replicas {
			return
		}
	}
	t.Errorf("the oldest recommendation before the upgrade (%d at %s) is gone after it: %v", before[0].Replicas, before[0].Timestamp, after)
}

// rebuildImage builds podpilot again with another version stamp (so the
// binary differs), packs it tagged tag, and imports it into the node.
func rebuildImage(ctx context.Context, t *testing.T, tag string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "podpilot")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags",
		"-s -w -X k8s.io/component-base/version.gitVersion=v0.0.0-"+tag, "-o", bin, "./cmd/adapter")
	build.Dir, build.Env = framework.RepoRoot(), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("rebuild podpilot: %v\n%s", err, out)
	}
	pack := exec.CommandContext(ctx, filepath.Join(framework.RepoRoot(), "hack", "build-image.sh"), "podpilot")
	pack.Env = append(os.Environ(), "IMAGE_TAG="+tag, "PODPILOT_BINARY="+bin, "IMAGE_OUT="+dir)
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("pack the rebuilt image: %v\n%s", err, out)
	}
	if err := cluster.ImportImage(ctx, filepath.Join(dir, "podpilot.tar")); err != nil {
		t.Fatal(err)
	}
}

// TestSlowPrometheusNoRestartNoScaleDown makes Prometheus answer nothing for
// 60 s (the proxy between the pods and Prometheus holds every request):
// the kubelet must not restart podpilot (its liveness check must not wait
// on Prometheus) and nothing may scale down.
func TestSlowPrometheusNoRestartNoScaleDown(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	s := newScaled(ctx, t, 1, 300, 30*time.Second, 3)
	before, err := restarts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rec := s.record(ctx)
	start := time.Now()
	proxy.Set(framework.Fault{Delay: 10 * time.Minute})
	framework.WaitFor(ctx, t, 2*time.Minute, "60s of a hung Prometheus", func(context.Context) (bool, string, error) {
		return time.Since(start) >= 60*time.Second, "", nil
	})
	proxy.Set(framework.Fault{})
	// The kubelet restarts after failureThreshold × periodSeconds; give a
	// late restart and a late scale-down time to show.
	framework.WaitFor(ctx, t, time.Minute, "20s after the fault", func(context.Context) (bool, string, error) {
		return time.Since(start) >= 80*time.Second, "", nil
	})
	changes := rec.Stop()
	after, err := restarts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	restarted := 0
	for pod, n := range after {
		restarted += int(n - before[pod])
	}
	reportNode(t, "slow-prometheus", "60s hung: %d podpilot restarts by the kubelet; workload replicas: %s",
		restarted, describeChanges(changes, start))
	if restarted != 0 {
		t.Errorf("the kubelet restarted podpilot %d times while Prometheus hung (before %v, after %v):\n%s", restarted, before, after, describePodpilotPods(ctx))
	}
	for _, c := range changes {
		if c.replicas < 3 {
			t.Errorf("scaled down to %d at %+.1fs while Prometheus hung", c.replicas, c.at.Sub(start).Seconds())
		}
	}
}

// TestPrometheusRestartRecovery kills Prometheus and starts it again; the
// PodAutoscaler acts on the metric again within one sync period after
// Prometheus is ready.
func TestPrometheusRestartRecovery(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	s := newScaled(ctx, t, 1, 200, 30*time.Second, 2)
	restart, err := cluster.StopPrometheus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.load.Set(500) // wants 5 once Prometheus answers again
	if err := restart(ctx); err != nil {
		t.Fatal(err)
	}
	ready := time.Now()
	// The first sample at the new load: from then on podpilot can act.
	var sampled time.Duration
	framework.WaitFor(ctx, t, time.Minute, "the new load in Prometheus", func(ctx context.Context) (bool, string, error) {
		v, err := promValue(ctx, fmt.Sprintf(`max(%s{namespace=%q})`, loadMetric, s.ns))
		sampled = time.Since(ready)
		return v == 250, fmt.Sprintf("per-pod load %v", v), err
	})
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", s.ns, s.name, 5)
	took := time.Since(ready)
	reportNode(t, "prometheus-restart", "scaled 2→5 %.1fs after the restarted Prometheus was ready, %.1fs after its first sample of the new load (sync period %s)",
		took.Seconds(), (took - sampled).Seconds(), syncPeriod)
	checkTiming(t, took-sampled <= syncPeriod+time.Second, "scaled %.1fs after the first sample, want within one sync period (%s) + 1s", (took - sampled).Seconds(), syncPeriod)
}

// promValue returns the value of an instant query with one result, from the
// cluster's Prometheus.
func promValue(ctx context.Context, q string) (float64, error) {
	c, err := promapi.NewClient(promapi.Config{Address: cluster.PrometheusURL})
	if err != nil {
		return 0, fmt.Errorf("prometheus client: %w", err)
	}
	v, _, _, err := promv1.NewAPI(c).Query(ctx, q, time.Time{})
	if err != nil {
		return 0, fmt.Errorf("query %s: %w", q, err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 {
		return 0, fmt.Errorf("query %s: %d results", q, len(vec))
	}
	return float64(vec[0].Value), nil
}
