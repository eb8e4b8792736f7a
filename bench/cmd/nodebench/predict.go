package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	// rampRise is how long the daily ramp takes from the low to the high load.
	rampRise = time.Minute
	// rampHold is how long the high load is held.
	rampHold = 2 * time.Minute
	// historyDays of backfilled history the PodAutoscaler reads.
	historyDays = 3
)

// predictKind is the custom metric step as a daily ramp: the stock HPA as
// in customKind, the PodAutoscaler with spec.prediction ScaleOut.
func (e *env) predictKind() stepKind {
	k := e.customKind()
	k.name = "pred"
	k.paSpec += fmt.Sprintf("  prediction: {mode: ScaleOut, historyDays: %d}\n", historyDays)
	return k
}

// predict runs e.o.ramps daily ramps (e.o.rampEvery apart, each at its own
// time of day in the history) on two identical Deployments: the
// PodAutoscaler's with history backfilled in Prometheus (the same ramps at
// the same times of day on each of the last days), the stock HPA's as in
// the custom metric step. Before each ramp both are reset to one pod with
// fresh autoscalers. It reports when each one's new pods were Ready against
// each ramp's start and its peak.
func (e *env) predict(ctx context.Context) (report.Section, error) {
	kind := e.predictKind()
	first := time.Now().Add(e.o.rampIn)
	ramps := make([]time.Time, e.o.ramps)
	for i := range ramps {
		ramps[i] = first.Add(time.Duration(i) * e.o.rampEvery)
	}
	low, high := float64(lowRate*batch), float64(highRate*batch)
	load := dailyRamps(ramps, rampRise, rampHold, low, high)
	sec := report.Section{Title: "predicted step: a daily ramp, PodAutoscaler in ScaleOut and stock HPA",
		Intro: fmt.Sprintf("The custom metric step's two Deployments and metric (zdns_vanguard_qps 2000 per pod), the load daily ramps: %.0f queries/s, "+
			"rising over %s to %.0f, held %s. Prometheus holds %d days of the PodAutoscaler's Deployment's counter (one former pod, backfilled with "+
			"promtool, every %s) with the same ramps at the same times of day; its PodAutoscaler has `prediction: {mode: ScaleOut, historyDays: %d}`, "+
			"the default lead time (observed start-up + one sync period). The stock HPA on prometheus-adapter is the reactive reference. %d ramp(s), "+
			"%s apart; before each both are reset to one pod with fresh autoscalers. Times are since the ramp's start; negative is before it.",
			low, rampRise, high, rampHold, historyDays, e.o.scrape, historyDays, len(ramps), e.o.rampEvery)}
	pp, err := versioned.NewForConfig(e.c.Config)
	if err != nil {
		return sec, fmt.Errorf("podpilot clientset: %w", err)
	}
	rates := map[string]*rateLoad{}
	defer func() {
		for _, r := range rates {
			r.stop()
		}
		e.deleteDeployments(context.WithoutCancel(ctx), kind)
	}()
	stopDrive, err := e.predictSetup(ctx, kind, rates, load)
	defer stopDrive()
	if err != nil {
		return sec, err
	}
	run := &stepRun{kind: kind, rates: rates, pp: pp}
	table := report.Table{Header: []string{"ramp", "autoscaler", "pods", "ready endpoints at the ramp's start", "first scale-out", "last new pod Ready",
		"last new pod Ready, since the peak (ramp start + " + rampRise.String() + ")"}}
	var paReady, hpaReady []float64
	for i, rampAt := range ramps {
		if err := e.prepareRamp(ctx, run, i, rampAt); err != nil {
			sec.Notes = append(sec.Notes, err.Error())
			break
		}
		start := time.Now()
		samples := e.watch(ctx, kind, start, rampAt.Add(rampRise+2*time.Minute))
		for _, who := range []string{"pa", "hpa"} {
			row, ready, ok := rampRow(samples[who], start, rampAt)
			label := map[string]string{"pa": "PodAutoscaler, ScaleOut", "hpa": "stock HPA"}[who]
			table.Rows = append(table.Rows, append([]string{fmt.Sprint(i + 1), label}, row...))
			if ok && who == "pa" {
				paReady = append(paReady, ready.Seconds())
			} else if ok {
				hpaReady = append(hpaReady, ready.Seconds())
			}
		}
		if err := ctx.Err(); err != nil {
			return sec, err
		}
	}
	sec.Tables = []report.Table{table}
	if pa, err := pp.AutoscalingV1alpha1().PodAutoscalers(loadNamespace).Get(ctx, fmt.Sprintf("%s-pa-%d", kind.name, len(ramps)-1), metav1.GetOptions{}); err == nil {
		if c := meta.FindStatusCondition(pa.Status.Conditions, "PredictionActive"); c != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("the last PodAutoscaler's PredictionActive at the end: %s %s: %s", c.Status, c.Reason, c.Message))
		}
		if p := pa.Status.Prediction; p != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("its status.prediction: lead time %ds, model %s, replicas %d", p.LeadTimeSeconds, p.Model, p.Replicas))
		}
	}
	pm, hm := stats.Summarize(paReady), stats.Summarize(hpaReady)
	sec.Headline = []string{fmt.Sprintf("predicted ramp: last new pod Ready %s s after the ramp's start (median of %d; PodAutoscaler ScaleOut), %s s (stock HPA, %d); %d of %d ramps with every new pod Ready before the load",
		stats.Num(pm.P50, 1), pm.N, stats.Num(hm.P50, 1), hm.N, countAtMost(paReady, 0), len(ramps))}
	return sec, nil
}

// predictSetup starts kind's Deployments at the low load (into rates),
// backfills the PodAutoscaler's history and, once both metrics are served,
// drives the load along load second by second until the returned stop.
func (e *env) predictSetup(ctx context.Context, kind stepKind, rates map[string]*rateLoad, load func(time.Time) float64) (stop func(), err error) {
	for _, name := range []string{kind.name + "-pa", kind.name + "-hpa"} {
		u, err := e.workload(ctx, name)
		if err != nil {
			return func() {}, err
		}
		rates[name] = startRate(ctx, u, lowRate)
	}
	if err := e.backfill(ctx, kind.name+"-pa-5d8f9c7b6-hist1", load); err != nil {
		return func() {}, err
	}
	if err := e.waitMetric(ctx, kind); err != nil {
		return func() {}, err
	}
	drive, stopDrive := context.WithCancel(ctx)
	go func() {
		for drive.Err() == nil {
			for _, r := range rates {
				r.set(max(1, int(load(time.Now())/batch)))
			}
			if sleep(drive, time.Second) != nil {
				return
			}
		}
	}()
	return stopDrive, nil
}

// rampRow is one autoscaler's row of one ramp: pods, ready endpoints at the
// ramp's start, first scale-out, last new pod Ready since the ramp's start
// and since its peak; and that last time, if all new pods came.
func rampRow(ss []sample, start, rampAt time.Time) ([]string, time.Duration, bool) {
	if len(ss) == 0 {
		return []string{"no look", "", "", "", ""}, 0, false
	}
	final := ss[len(ss)-1].Replicas
	first, atRamp := "none", 0
	for _, s := range ss {
		if first == "none" && s.Replicas > 1 {
			first = signed(start.Add(s.At).Sub(rampAt))
		}
		if !start.Add(s.At).After(rampAt) {
			atRamp = s.Ready
		}
	}
	ahead, ok := readyAhead(ss, start, rampAt, int(final))
	if !ok || final <= 1 {
		return []string{fmt.Sprintf("1 → %d", final), fmt.Sprint(atRamp), first, "never", "never"}, 0, false
	}
	return []string{fmt.Sprintf("1 → %d", final), fmt.Sprint(atRamp), first, signed(-ahead), signed(-ahead - rampRise)}, -ahead, true
}

// countAtMost counts the values at most limit.
func countAtMost(vs []float64, limit float64) int {
	n := 0
	for _, v := range vs {
		if v <= limit {
			n++
		}
	}
	return n
}

// signed formats d as "-12.3 s" / "+4.0 s".
func signed(d time.Duration) string {
	return fmt.Sprintf("%+.1f s", d.Seconds())
}

// watch looks at kind's Deployments every second from start until end.
func (e *env) watch(ctx context.Context, kind stepKind, start, end time.Time) map[string][]sample {
	out := map[string][]sample{}
	for ctx.Err() == nil && time.Now().Before(end) {
		for _, who := range []string{"pa", "hpa"} {
			name := kind.name + "-" + who
			replicas, err := e.c.Replicas(ctx, "Deployment", loadNamespace, name)
			if err != nil {
				continue
			}
			out[who] = append(out[who], sample{At: time.Since(start), Replicas: replicas, Ready: e.readyEndpoints(ctx, name)})
		}
		_ = sleep(ctx, time.Second)
	}
	return out
}

// backfill writes historyDays (and an hour) of the counter of a former pod
// serving load into Prometheus, up to a minute ago: Prometheus is stopped,
// promtool writes the blocks, Prometheus starts again.
func (e *env) backfill(ctx context.Context, pod string, load func(time.Time) float64) error {
	end := time.Now().Add(-time.Minute).Truncate(e.o.scrape)
	text := counterHistory("zdns_vanguard_queries_total", map[string]string{"namespace": loadNamespace, "pod": pod},
		end.Add(-historyDays*24*time.Hour-time.Hour), end, e.o.scrape, load)
	file := filepath.Join(e.c.StateDir, "history.om")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write history: %w", err)
	}
	restart, err := e.c.StopPrometheus(ctx)
	if err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "promtool", "tsdb", "create-blocks-from", "openmetrics", "--max-block-duration=24h",
		file, filepath.Join(e.c.StateDir, "prometheus", "data")).CombinedOutput()
	if rerr := restart(ctx); rerr != nil {
		return fmt.Errorf("restart prometheus: %w", rerr)
	}
	if err != nil {
		return fmt.Errorf("promtool: %w: %s", err, out)
	}
	return framework.Poll(ctx, 2*time.Minute, "backfilled history in Prometheus", func(ctx context.Context) (bool, string, error) {
		v, err := e.podValues(ctx, fmt.Sprintf(`count_over_time(zdns_vanguard_queries_total{pod=%q}[1d] offset 1d)`, pod))
		return err == nil && v[pod] > 0, fmt.Sprint(v, err), nil
	})
}

// prepareRamp resets both Deployments and their autoscalers before ramp i at
// rampAt, and, after the first, waits out the last ramp's tail; an error says
// why the ramps stop here.
func (e *env) prepareRamp(ctx context.Context, run *stepRun, i int, rampAt time.Time) error {
	if err := e.reset(ctx, run, i); err != nil {
		return fmt.Errorf("ramp %d: %w", i+1, err)
	}
	if time.Until(rampAt) < time.Minute {
		return fmt.Errorf("ramp %d: set-up took too long, the ramp starts in %s; raise --ramp-in or --ramp-every",
			i+1, time.Until(rampAt).Round(time.Second))
	}
	if i > 0 {
		// The fresh PodAutoscaler must not see the last ramp's tail: wait two sync periods at the low load.
		_ = sleep(ctx, 2*e.sync)
	}
	return nil
}
