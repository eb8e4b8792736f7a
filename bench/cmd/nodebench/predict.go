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
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	// rampRise is how long the daily ramp takes from the low to the high load.
	rampRise = time.Minute
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

// predict runs one daily ramp on two identical Deployments: the
// PodAutoscaler's with history backfilled in Prometheus (the same ramp at
// the same time of day on each of the last days), the stock HPA's as in the
// custom metric step. It reports when each one's new pods were Ready
// against the ramp's start and its peak.
func (e *env) predict(ctx context.Context) (report.Section, error) {
	kind := e.predictKind()
	rampAt := time.Now().Add(e.o.rampIn)
	low, high := float64(lowRate*batch), float64(highRate*batch)
	load := dailyRamp(rampAt, rampRise, 2*time.Hour, low, high)
	sec := report.Section{Title: "predicted step: a daily ramp, PodAutoscaler in ScaleOut and stock HPA",
		Intro: fmt.Sprintf("The custom metric step's two Deployments and metric (zdns_vanguard_qps 2000 per pod), the load a daily ramp: %.0f queries/s, "+
			"rising over %s to %.0f and held. Prometheus holds %d days of the PodAutoscaler's Deployment's counter (one former pod, backfilled with "+
			"promtool, every %s) with the same ramp at the same time of day; its PodAutoscaler has `prediction: {mode: ScaleOut, historyDays: %d}`, "+
			"the default lead time (observed start-up + one sync period). The stock HPA on prometheus-adapter is the reactive reference. One ramp "+
			"(one a day in the history): the times are since the ramp's start; negative is before it.", low, rampRise, high, historyDays, e.o.scrape, historyDays)}
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
	for _, name := range []string{kind.name + "-pa", kind.name + "-hpa"} {
		u, err := e.workload(ctx, name)
		if err != nil {
			return sec, err
		}
		rates[name] = startRate(ctx, u, lowRate)
	}
	if err := e.backfill(ctx, kind.name+"-pa-5d8f9c7b6-hist1", load); err != nil {
		return sec, err
	}
	if err := e.waitMetric(ctx, kind); err != nil {
		return sec, err
	}
	run := &stepRun{kind: kind, rates: rates, pp: pp}
	if err := e.reset(ctx, run, 0); err != nil {
		return sec, err
	}
	if time.Until(rampAt) < time.Minute {
		return sec, fmt.Errorf("set-up took too long: the ramp starts in %s; raise --ramp-in", time.Until(rampAt).Round(time.Second))
	}
	start := time.Now()
	end := rampAt.Add(rampRise + 2*time.Minute)
	drive, stopDrive := context.WithCancel(ctx)
	defer stopDrive()
	go func() { // the load follows the ramp, second by second
		for drive.Err() == nil {
			for _, r := range rates {
				r.set(max(1, int(load(time.Now())/batch)))
			}
			if sleep(drive, time.Second) != nil {
				return
			}
		}
	}()
	samples := e.watch(ctx, kind, start, end)
	table := report.Table{Header: []string{"autoscaler", "pods", "ready endpoints at the ramp's start", "first scale-out", "last new pod Ready",
		"last new pod Ready, since the peak (ramp start + " + rampRise.String() + ")"}}
	for _, who := range []string{"pa", "hpa"} {
		ss := samples[who]
		label := map[string]string{"pa": "PodAutoscaler, ScaleOut", "hpa": "stock HPA"}[who]
		if len(ss) == 0 {
			table.Rows = append(table.Rows, []string{label, "no look", "", "", "", ""})
			continue
		}
		final := ss[len(ss)-1].Replicas
		first := "none"
		for _, s := range ss {
			if s.Replicas > 1 {
				first = signed(start.Add(s.At).Sub(rampAt))
				break
			}
		}
		ready, peak := "never", "never"
		if ahead, ok := readyAhead(ss, start, rampAt, int(final)); ok && final > 1 {
			ready = signed(-ahead)
			peakAhead, _ := readyAhead(ss, start, rampAt.Add(rampRise), int(final))
			peak = signed(-peakAhead)
		}
		atRamp := 0
		for _, s := range ss {
			if !start.Add(s.At).After(rampAt) {
				atRamp = s.Ready
			}
		}
		table.Rows = append(table.Rows, []string{label, fmt.Sprintf("1 → %d", final), fmt.Sprint(atRamp), first, ready, peak})
	}
	sec.Tables = []report.Table{table}
	if pa, err := pp.AutoscalingV1alpha1().PodAutoscalers(loadNamespace).Get(ctx, kind.name+"-pa-0", metav1.GetOptions{}); err == nil {
		if c := meta.FindStatusCondition(pa.Status.Conditions, "PredictionActive"); c != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("PodAutoscaler's PredictionActive at the end: %s %s: %s", c.Status, c.Reason, c.Message))
		}
		if p := pa.Status.Prediction; p != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("its status.prediction: lead time %ds, model %s, replicas %d", p.LeadTimeSeconds, p.Model, p.Replicas))
		}
	}
	sec.Headline = []string{fmt.Sprintf("predicted ramp: last new pod Ready at ramp start %s (PodAutoscaler ScaleOut), %s (stock HPA); one ramp",
		table.Rows[0][4], table.Rows[len(table.Rows)-1][4])}
	return sec, nil
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
