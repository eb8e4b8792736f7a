package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// dailyRush is a daily load in qps: 1000, rising over 5 minutes from the time of day of from
// to 9000, held for two hours.
func dailyRush(from time.Time) func(time.Time) float64 {
	return func(t time.Time) float64 {
		since := (t.Sub(from)%(24*time.Hour) + 24*time.Hour) % (24 * time.Hour)
		switch {
		case since < 5*time.Minute:
			return 1000 + 8000*since.Minutes()/5
		case since < 2*time.Hour:
			return 9000
		}
		return 1000
	}
}

// backfillStep is the interval of a backfilled former pod's samples.
const backfillStep = 30 * time.Second

// lookbackDelta is how long Prometheus counts a series after its last sample (its
// --query.lookback-delta, left at the default by hack/).
const lookbackDelta = 5 * time.Minute

// formerPodEnd is when a backfilled former pod's last sample must be for its series to stop
// counting before liveFrom, when its workload's live pod was started: a minute before it, less
// Prometheus's lookback. The history a forecast reads sums the workload's pods, so a former pod
// still counted beside the live one doubles the load at the history's newest steps, a spike no
// forecast foresees, nor persistence: the forecast's recent window (forecast.RecentSkillWindow)
// then rightly finds the model no better than persistence and turns the forecast off. A pod
// replaced in a real rollout hands its load over; this one never carried the live load.
func formerPodEnd(liveFrom time.Time) time.Time {
	return liveFrom.Add(-lookbackDelta - time.Minute).Truncate(backfillStep)
}

// backfill writes the gauge zdns_vanguard_qps of one former pod of each workload in ns, with
// the load of each, every backfillStep over span up to end, into the cluster's Prometheus: stopped,
// backfilled with promtool, started again.
func backfill(ctx context.Context, t *testing.T, ns string, span time.Duration, end time.Time, loads map[string]func(time.Time) float64) {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE zdns_vanguard_qps gauge\n")
	for workload, load := range loads {
		for at := end.Add(-span); !at.After(end); at = at.Add(backfillStep) {
			fmt.Fprintf(&b, "zdns_vanguard_qps{namespace=%q,pod=%q} %g %d\n", ns, workload+"-5d8f9c7b6-hist1", load(at), at.Unix())
		}
	}
	b.WriteString("# EOF\n")
	dir := t.TempDir()
	file := filepath.Join(dir, "history.om")
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	restart, err := cluster.StopPrometheus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, "promtool", "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h",
		file, filepath.Join(cluster.StateDir, "prometheus", "data")).CombinedOutput()
	if rerr := restart(ctx); rerr != nil {
		t.Fatalf("restart prometheus: %v", rerr)
	}
	if err != nil {
		t.Fatalf("promtool: %v: %s", err, out)
	}
}

// TestForecastScalesOutBeforeTheLoadAndForecastOnlyWritesNothing: two Deployments with three
// days of backfilled history in which the load rises from 1000 to 9000 qps each day at the time
// of day 8 minutes from now, and 1000 qps now (1 replica's worth at 2000 per pod). The one whose
// PodAutoscaler is in ScaleOut (lead time 15 minutes) is scaled out now, before the load moves
// (which the reactive path would follow); the test says by how long. The one in ForecastOnly
// keeps its replica and says what the forecast would have done.
func TestForecastScalesOutBeforeTheLoadAndForecastOnlyWritesNothing(t *testing.T) {
	// promtool ships in Debian's prometheus package, which hack/install-prometheus.sh installs
	// for every e2e run: its absence is a broken set-up, never a reason to skip.
	if _, err := exec.LookPath("promtool"); err != nil {
		t.Fatalf("promtool (Debian's prometheus package, hack/install-prometheus.sh) is needed to backfill history: %v", err)
	}
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ppa-forecast")
	liveFrom := time.Now()
	rampAt := liveFrom.Add(8 * time.Minute)
	exp := serveExporter(t)
	for _, name := range []string{"web", "shadow"} {
		startWorkload(ctx, t, ns, name, 1)
		load := cluster.NewLoad(ctx, exp, ns, name, "zdns_vanguard_qps", false)
		t.Cleanup(load.Stop)
		load.Set(1000)
	}
	backfill(ctx, t, ns, 3*24*time.Hour, formerPodEnd(liveFrom), map[string]func(time.Time) float64{"web": dailyRush(rampAt), "shadow": dailyRush(rampAt)})
	framework.WaitFor(ctx, t, time.Minute, "the metric served again after Prometheus's restart", func(ctx context.Context) (bool, string, error) {
		_, err := cluster.Client.CoreV1().RESTClient().Get().AbsPath("/apis/custom.metrics.k8s.io/v1beta2/namespaces", ns, "pods", "*", "zdns_vanguard_qps").DoRaw(ctx)
		return err == nil, fmt.Sprint(err), nil
	})

	prediction := func(mode string) string {
		return fmt.Sprintf("  prediction: {mode: %s, historyDays: 3, leadTimeSeconds: 900}\n", mode)
	}
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("web", "deployment", "web", 1, 10, "zdns_vanguard_qps", "2000", prediction("ScaleOut")))
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("shadow", "deployment", "shadow", 1, 10, "zdns_vanguard_qps", "2000", prediction("ForecastOnly")))

	framework.WaitFor(ctx, t, 2*time.Minute, "the ScaleOut PodAutoscaler to scale web out", func(ctx context.Context) (bool, string, error) {
		replicas, err := cluster.Replicas(ctx, "Deployment", ns, "web")
		if err != nil {
			return false, "", err
		}
		pa, err := getPodAutoscaler(ctx, t, ns, "web")
		if err != nil {
			return false, "", err
		}
		return replicas > 1, fmt.Sprintf("%d replicas; %s", replicas, describeConditions(pa)), nil
	})
	ahead := time.Until(rampAt)
	t.Logf("web scaled out %s before the load starts to rise (the reactive path moves after it does)", ahead.Round(time.Second))
	if ahead <= 0 {
		t.Errorf("web scaled out %s after the load started to rise", -ahead)
	}
	pa, err := getPodAutoscaler(ctx, t, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(pa.Status.Conditions, "PredictionActive"); c == nil || c.Reason != "ForecastRaised" {
		t.Errorf("web PredictionActive = %+v, want ForecastRaised", c)
	}
	if p := pa.Status.Prediction; p == nil || p.Replicas < 5 || len(p.Metrics) != 1 || p.Metrics[0].Value == nil ||
		math.Abs(p.Metrics[0].Value.AsApproximateFloat64()-9000) > 2000 || p.Metrics[0].Replicas != p.Replicas {
		t.Errorf("web status.prediction = %+v, want about 9000 qps and 5 replicas, the one metric's replicas the forecast's", p)
	}

	waitPodAutoscalerReason(ctx, t, ns, "shadow", "PredictionActive", "ForecastOnly")
	shadow, err := getPodAutoscaler(ctx, t, ns, "shadow")
	if err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(shadow.Status.Conditions, "PredictionActive")
	t.Logf("shadow: %s", c.Message)
	if !strings.Contains(c.Message, "would have scaled to") {
		t.Errorf("shadow PredictionActive message %q, want what it would have scaled to", c.Message)
	}
	cluster.HoldReplicas(ctx, t, 10*time.Second, "Deployment", ns, "shadow", 1)
	if n := countEvents(ctx, t, ns, "PodAutoscaler", "shadow", "SuccessfulRescale"); n != 0 {
		t.Errorf("the ForecastOnly PodAutoscaler rescaled %d times", n)
	}
}

// waitPodAutoscalerReason waits until condition typ of PodAutoscaler name has reason.
func waitPodAutoscalerReason(ctx context.Context, t *testing.T, ns, name, typ, reason string) {
	t.Helper()
	framework.WaitFor(ctx, t, 2*time.Minute, fmt.Sprintf("PodAutoscaler %s %s reason %s", name, typ, reason), func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, name)
		if err != nil {
			return false, "", err
		}
		c := meta.FindStatusCondition(pa.Status.Conditions, typ)
		return c != nil && c.Reason == reason, describeConditions(pa), nil
	})
}
