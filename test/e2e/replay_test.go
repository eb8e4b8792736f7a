package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// TestReplayMatchesTheRealPodAutoscaler runs a load profile (1 -> 4 -> 7 -> 2 pods' worth) through
// the exporter under a PodAutoscaler for about three minutes, then runs `podpilot replay` over the
// same window with the same spec, and with a spec of half the target. The harness plays
// kube-state-metrics: it exports the Deployment's spec.replicas as kube_deployment_spec_replicas.
//
// Tolerance: every 2 s step with a known real replica count is a checkpoint; at >= 95% of them the
// replayed count must equal the real count at that step or at most maxSkewSteps (3 steps, 6 s)
// before or after it. The replay decides on the load sample itself, while the real count reaches
// Prometheus through the controller's round (up to one 2 s sync period after the load was
// scraped), the harness's 0.5 s mirror tick and another 1 s scrape: the real curve lags the
// replayed one by about 4 s at each transition (2 steps, seen in the runs), so comparing the same
// step only would fail every transition by its whole size (3 to 5 pods). A wrong decision, a
// missed stabilization window or a different rate limit shifts a transition by 20 s or changes
// the level, and fails. The half-target spec must replay more replica-hours and a higher peak.
func TestReplayMatchesTheRealPodAutoscaler(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "replay")
	const name = "vg1-vanguard"
	startWorkload(ctx, t, ns, name, 1)
	exp := serveExporter(t)
	load := cluster.NewLoad(ctx, exp, ns, name, "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	stopMirror := mirrorSpecReplicas(ctx, exp, ns, name)
	t.Cleanup(stopMirror)
	load.Set(800)
	spec := podAutoscalerYAML(name, "deployment", name, 1, 10, "zdns_vanguard_qps", "1000", "")
	applyPodAutoscaler(ctx, t, ns, spec)
	waitPodAutoscalerCondition(ctx, t, ns, name, "ScalingActive", metav1.ConditionTrue)

	from := time.Now().Truncate(time.Second)
	cluster.HoldReplicas(ctx, t, 20*time.Second, "Deployment", ns, name, 1)
	for _, phase := range []struct {
		load float64
		want int32
	}{{4000, 4}, {7000, 7}, {2000, 2}} {
		load.Set(phase.load)
		cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, name, phase.want)
		cluster.HoldReplicas(ctx, t, 25*time.Second, "Deployment", ns, name, phase.want)
	}
	to := time.Now().Truncate(time.Second)

	// PODPILOT_E2E_REPLAY_OUT keeps the replay's tables and charts (docs/replay-example.svg comes from there).
	dir := os.Getenv("PODPILOT_E2E_REPLAY_OUT")
	if dir == "" {
		dir = t.TempDir()
	}
	same, lower := filepath.Join(dir, "same.yaml"), filepath.Join(dir, "half-target.yaml")
	writeTestFile(t, same, spec)
	writeTestFile(t, lower, podAutoscalerYAML(name, "deployment", name, 1, 10, "zdns_vanguard_qps", "500", ""))
	// Prometheus scrapes every second: wait until it has a sample past the window's end.
	prom := prometheusAPI(t)
	framework.WaitFor(ctx, t, 30*time.Second, "Prometheus to scrape past the window", func(ctx context.Context) (bool, string, error) {
		ts, ok, err := queryValue(ctx, prom, fmt.Sprintf("max(timestamp(kube_deployment_spec_replicas{namespace=%q}))", ns))
		return ok && ts > float64(to.Unix()+1), fmt.Sprintf("latest sample at %.0f, window ends at %d", ts, to.Unix()), err
	})
	out := runReplay(ctx, t, "--prometheus-url="+cluster.PrometheusURL, "--config="+filepath.Join(cluster.StateDir, "podpilot-rules.yaml"),
		"--namespace="+ns, "--from="+from.UTC().Format(time.RFC3339), "--to="+to.UTC().Format(time.RFC3339), "--step=2s",
		"--ready-delay=2s", "--autoscaler-downscale-stabilization=20s", "-f", same, "-f", lower, "--out="+dir)
	t.Logf("podpilot replay summary:\n%s", out)

	sameRows, lowerRows := readReplayTable(t, filepath.Join(dir, "same.csv")), readReplayTable(t, filepath.Join(dir, "half-target.csv"))
	checkpoints, exact, matched := compareReplay(t, sameRows, maxSkewSteps)
	t.Logf("checkpoints %d: replayed = actual at the same step %d, within ±%d steps %d", checkpoints, exact, maxSkewSteps, matched)
	if checkpoints < 30 || float64(matched) < 0.95*float64(checkpoints) {
		t.Errorf("replayed replicas match the real ones within ±%d steps at %d of %d checkpoints; want >= 95%%", maxSkewSteps, matched, checkpoints)
	}
	if hs, hl, ps, pl := replicaSeconds(sameRows), replicaSeconds(lowerRows), peak(sameRows), peak(lowerRows); hl <= hs || pl <= ps {
		t.Errorf("half the target replays %g replica-seconds and a peak of %g, the real spec %g and %g; want more of both", hl, pl, hs, ps)
	}
}

// maxSkewSteps is how many 2 s steps the real curve may lag or lead the replayed one (see above).
const maxSkewSteps = 3

// compareReplay counts the rows with a known actual replica count, those where the replayed count
// equals it, and those where it equals the actual count within ±skew rows.
func compareReplay(t *testing.T, rows []replayRow, skew int) (checkpoints, exact, matched int) {
	t.Helper()
	for i, r := range rows {
		if math.IsNaN(r.actual) {
			continue
		}
		checkpoints++
		if r.replayed == r.actual {
			exact++
		}
		found := false
		for j := max(0, i-skew); j <= min(len(rows)-1, i+skew); j++ {
			found = found || rows[j].actual == r.replayed
		}
		if found {
			matched++
		} else {
			t.Logf("checkpoint %s: replayed %g, actual %g", r.time, r.replayed, r.actual)
		}
	}
	return checkpoints, exact, matched
}

// mirrorSpecReplicas exports the Deployment's spec.replicas as kube-state-metrics would, until stopped.
func mirrorSpecReplicas(ctx context.Context, exp *exporter.Server, ns, name string) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			if n, err := cluster.Replicas(ctx, "Deployment", ns, name); err == nil {
				exp.SetGauge("kube_deployment_spec_replicas", map[string]string{"namespace": ns, "deployment": name}, float64(n))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runReplay runs bin/podpilot replay and returns its standard output.
func runReplay(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, podpilotBinary, append([]string{"replay"}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("podpilot replay: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// replayRow is one row of a replay table.
type replayRow struct {
	time             string
	actual, replayed float64
}

func readReplayTable(t *testing.T, path string) []replayRow {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []replayRow
	for _, rec := range records[1:] { // time, actual_replicas, replayed_replicas, ...
		r := replayRow{time: rec[0], actual: math.NaN()}
		if rec[1] != "" {
			r.actual, _ = strconv.ParseFloat(rec[1], 64)
		}
		r.replayed, _ = strconv.ParseFloat(rec[2], 64)
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no rows", path)
	}
	return rows
}

func replicaSeconds(rows []replayRow) float64 {
	var s float64
	for _, r := range rows {
		s += r.replayed * 2
	}
	return s
}

func peak(rows []replayRow) float64 {
	var p float64
	for _, r := range rows {
		p = max(p, r.replayed)
	}
	return p
}
