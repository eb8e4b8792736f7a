package scenario

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/pkg/replay"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// viaPrometheus tells the traces scenario p also backfills into Prometheus and replays through
// the default rules, as `podpilot replay` reads a real workload.
func viaPrometheus(name string) bool { return name == "diurnal" || name == "flights" }

// PredictViaPrometheus backfills the diurnal and flights traces into a TSDB with promtool, starts
// Prometheus on it on loopback, and replays them with `podpilot replay`'s reader (query_range
// through the default rules): the same comparison as Predict, from Prometheus. Without promtool
// or prometheus on PATH (hack/install-prometheus.sh), it says so and skips.
func PredictViaPrometheus(ctx context.Context, work string) (report.Table, []string, error) {
	t := report.Table{Header: []string{"trace (via Prometheus)", "WAPE model / naive at 1m", "at 15s", "pod-s short r / p / o", "short p÷r", "replica-h r / p / o", "p÷r", "p÷o"}}
	for _, tool := range []string{"promtool", "prometheus"} {
		if _, err := exec.LookPath(tool); err != nil {
			return t, []string{"Prometheus replay skipped: " + tool + " is not on PATH (hack/install-prometheus.sh installs it)."}, nil
		}
	}
	tsdb := filepath.Join(work, "tsdb")
	var scs []tracegen.Scenario
	for _, sc := range tracegen.Scenarios(predictStep) {
		if !viaPrometheus(sc.Name) {
			continue
		}
		if err := backfill(ctx, sc, work, tsdb); err != nil {
			return t, nil, err
		}
		scs = append(scs, sc)
	}
	url, stop, err := startPrometheus(ctx, work, tsdb)
	if err != nil {
		return t, nil, err
	}
	defer stop()
	for _, sc := range scs {
		c, err := replayFromPrometheus(ctx, url, sc)
		if err != nil {
			return t, nil, err
		}
		t.Rows = append(t.Rows, comparisonCells(sc.Name, c))
	}
	return t, []string{"Via Prometheus: each trace written as two pods' zdns_vanguard_queries_total counters scraped every 15 s, " +
		"backfilled with `promtool tsdb create-blocks-from openmetrics`, and read back as zdns_vanguard_qps (rate over 1m) through the default rules."}, nil
}

// backfill writes sc's trace as OpenMetrics and turns it into TSDB blocks.
func backfill(ctx context.Context, sc tracegen.Scenario, work, tsdb string) error {
	tr, err := sc.Make()
	if err != nil {
		return err
	}
	path := filepath.Join(work, sc.Name+".om")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	err = tracegen.WriteOpenMetrics(f, tr, "zdns_vanguard_queries", "trace-"+sc.Name, tracegen.Pods("vg1-vanguard", 2),
		tr.Start, sc.To.Add(time.Minute), predictStep)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: p: backfilling %s into Prometheus\n", sc.Name)
	out, err := exec.CommandContext(ctx, "promtool", "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h", path, tsdb).CombinedOutput()
	if err != nil {
		return fmt.Errorf("promtool create-blocks-from openmetrics %s: %w: %s", path, err, tail(string(out), 500))
	}
	return os.Remove(path)
}

// startPrometheus serves tsdb on a free loopback port, without scraping anything.
func startPrometheus(ctx context.Context, work, tsdb string) (string, func(), error) {
	port, err := framework.FreePort()
	if err != nil {
		return "", nil, err
	}
	cfg := filepath.Join(work, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global: {}\n"), 0o644); err != nil {
		return "", nil, fmt.Errorf("write %s: %w", cfg, err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	log, err := os.Create(filepath.Join(work, "prometheus.log"))
	if err != nil {
		return "", nil, fmt.Errorf("create prometheus log: %w", err)
	}
	cmd := exec.CommandContext(ctx, "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+tsdb,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr, "--query.max-samples=100000000")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start prometheus: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
	}
	url := "http://" + addr
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, stop, nil
			}
		}
		select {
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	stop()
	return "", nil, errors.New("prometheus on the backfilled TSDB was not ready within 2m; see prometheus.log")
}

// replayFromPrometheus reads sc's day and history through the default rules and compares.
func replayFromPrometheus(ctx context.Context, url string, sc tracegen.Scenario) (replay.Comparison, error) {
	client, err := api.NewClient(api.Config{Address: url})
	if err != nil {
		return replay.Comparison{}, fmt.Errorf("prometheus client: %w", err)
	}
	set, err := rules.Compile(rules.Default(), rules.StaticMapper(), rules.Limits{})
	if err != nil {
		return replay.Comparison{}, err
	}
	spec, err := PredictionSpec()
	if err != nil {
		return replay.Comparison{}, err
	}
	r := &replay.Reader{Source: promv1.NewAPI(client), Rules: set, Namespace: "trace-" + sc.Name}
	w := replay.Window{From: sc.From, To: sc.To, Step: predictStep}
	tr, err := r.Trace(ctx, spec, w)
	if err != nil {
		return replay.Comparison{}, err
	}
	history, err := r.History(ctx, spec, w, specconv.HistoryWindow(spec.PodAutoscaler.Spec.Prediction), replay.DefaultHistoryStep)
	if err != nil {
		return replay.Comparison{}, err
	}
	return replay.Compare(spec, tr, history, predictModel(), replay.DefaultPrediction())
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
