package scenario

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/replay"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
)

// Scenario p's settings: the sync period, the pods' start-up time (the lead time is both), and
// the per-pod target of the replayed PodAutoscaler.
const (
	predictStep      = 15 * time.Second
	predictReadyTime = 2 * time.Minute
	predictTarget    = "2000"
)

// PredictionSpec is scenario p's PodAutoscaler: zdns_vanguard_qps at 2000 per pod, 1 to 40
// replicas, default behavior, prediction ScaleOut.
func PredictionSpec() (replay.Spec, error) {
	return replay.SpecOf("ppa", predictionPA(func(s *podpilotv1alpha1.PodAutoscalerSpec) {
		s.CustomMetrics = []podpilotv1alpha1.CustomMetricSpec{{MetricName: "zdns_vanguard_qps", AverageValue: resource.MustParse(predictTarget)}}
	}))
}

// predictModel is the replay's model: upstream's defaults, a 15 s sync period, 2 min start-up.
func predictModel() replay.Model {
	return replay.Model{Config: decision.DefaultConfig(), SyncPeriod: predictStep, ReadyDelay: predictReadyTime}
}

// Predict is scenario p, without a cluster: each trace of tracegen.Scenarios replayed reactive,
// predictive (ScaleOut) and oracle with `podpilot replay`'s code, one table row per trace and
// one plot per trace beside the report.
func Predict(ctx context.Context, outDir, base string) (report.Section, error) {
	sec := report.Section{Title: "p. Predictive scaling against reactive and the oracle (replay, no cluster)", Intro: predictIntro()}
	spec, err := PredictionSpec()
	if err != nil {
		return sec, err
	}
	t := report.Table{Header: []string{"trace", "WAPE model / naive at 1m", "at 15s", "pod-s short r / p / o", "short p÷r",
		"replica-h r / p / o", "p÷r", "p÷o", "WAPE ÷ persistence (answered)", "above target r / p", "rescales/h r / p / o (p÷r)",
		"pod starts/h r / p / o", "steps p shorter than r / and beyond tolerance", "steps without data"}}
	cases, err := predictCases(spec)
	if err != nil {
		return sec, err
	}
	var days report.Table
	for _, pc := range cases {
		if err := ctx.Err(); err != nil {
			return sec, err
		}
		fmt.Fprintf(os.Stderr, "bench: p: %s\n", pc.name)
		started := time.Now()
		c, err := replay.CompareScenario(pc.spec, pc.sc, predictModel(), replay.DefaultPrediction(), replay.DefaultHistoryStep)
		if err != nil {
			return sec, err
		}
		row, warning := predictRow(pc.name, c)
		t.Rows = append(t.Rows, row)
		if warning != "" {
			sec.Notes = append(sec.Notes, "Warning (as `podpilot replay` prints it): "+warning+".")
		}
		sec.Headline = append(sec.Headline, predictHeadline(pc.name, c)...)
		if len(pc.sc.Holidays) > 0 {
			days = perDayTable(pc.sc, c)
			sec.Headline = append(sec.Headline, afterHolidayHeadline(pc.sc, c))
			sec.Notes = append(sec.Notes, fmt.Sprintf("The %s trace (%d steps of %s) took %s to replay three times (reactive, predictive, oracle) with the forecast refitted every %s.",
				pc.name, len(c.Steps[replay.Reactive]), predictStep, time.Since(started).Round(time.Second), replay.DefaultPrediction().Refresh))
		}
		file := fmt.Sprintf("%s-predict-%s.svg", base, pc.file)
		if err := writeChart(filepath.Join(outDir, file), c); err != nil {
			return sec, err
		}
		sec.Images = append(sec.Images, report.Image{Alt: pc.name + ": " + pc.sc.About, File: file})
	}
	sec.Tables = append(sec.Tables, t)
	if len(days.Rows) > 0 {
		sec.Tables = append(sec.Tables, days)
	}
	seeds, err := spikeSeeds(ctx, spec)
	if err != nil {
		return sec, err
	}
	sec.Tables = append(sec.Tables, seeds)
	work, err := os.MkdirTemp("", "podpilot-bench-p-")
	if err != nil {
		return sec, fmt.Errorf("temp dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(work) }()
	viaProm, notes, err := PredictViaPrometheus(ctx, work)
	if err != nil {
		return sec, fmt.Errorf("replay via Prometheus: %w", err)
	}
	if len(viaProm.Rows) > 0 {
		sec.Tables = append(sec.Tables, viaProm)
	}
	sec.Notes = append(sec.Notes, notes...)
	sec.Notes = append(sec.Notes, "pod-seconds short of target: max(0, ceil(load ÷ target) − ready pods) over time; "+
		"the oracle's is not 0 where even perfect foresight is capped by the scale-up rate limit (the spike). "+
		"*steps p shorter than r*: steps where the predictive run was short of target with fewer ready pods than the reactive run; "+
		"*and beyond tolerance*: of those, the steps where the predictive run's load per ready pod was also beyond the target's tolerance "+
		"(10%: inside it the algorithm leaves the replicas alone) while the reactive run's was not.")
	return sec, nil
}

// comparisonCells are a comparison's first cells in scenario p's tables: the trace, the WAPEs,
// the pod-seconds short and the replica-hours of the three runs with their ratios.
func comparisonCells(name string, c replay.Comparison) []string {
	s := c.Summaries(predictStep, nil)
	r, p, o := s[0], s[1], s[2]
	return []string{name, wapeCell(c.ModelPerStep, c.NaivePerStep), wapeCell(c.Model, c.Naive),
		fmt.Sprintf("%.0f / %.0f / %.0f", r.PodSecondsShort, p.PodSecondsShort, o.PodSecondsShort), ratio(p.PodSecondsShort, r.PodSecondsShort),
		fmt.Sprintf("%.1f / %.1f / %.1f", r.ReplicaHours, p.ReplicaHours, o.ReplicaHours),
		ratio(p.ReplicaHours, r.ReplicaHours), ratio(p.ReplicaHours, o.ReplicaHours)}
}

// persistenceCell shows the model's WAPE ÷ persistence's at the steps it answered, and the share
// of steps it answered.
func persistenceCell(c replay.Comparison) string {
	total := 0
	for _, n := range c.Answered {
		total += n
	}
	answered := math.NaN()
	if total > 0 {
		answered = float64(total-c.Answered["none"]) / float64(total)
	}
	return fmt.Sprintf("%s× (%s%%)", stats.Num(c.Model.WAPE()/c.Persistence.WAPE(), 2), stats.Num(100*answered, 0))
}

// wapeCell shows a model's WAPE beside seasonal-naive's and their ratio.
func wapeCell(model, naive forecast.Accuracy) string {
	return fmt.Sprintf("%s%% / %s%% (%s×)", stats.Num(100*model.WAPE(), 1), stats.Num(100*naive.WAPE(), 1), stats.Num(model.WAPE()/naive.WAPE(), 2))
}

// spikeSeedsN is how many noise seeds the unforecastable spike is replayed with.
const spikeSeedsN = 5

// spikeSeeds replays the unforecastable spike with spikeSeedsN noise seeds: whether predictive is
// worse than reactive on any of them, in pod-seconds short or time above target.
func spikeSeeds(ctx context.Context, spec replay.Spec) (report.Table, error) {
	t := report.Table{Header: []string{"spike, noise seed", "pod-s short r / p / o", "short p÷r", "above target r / p",
		"replica-h p÷r", "steps p shorter than r / and beyond tolerance"}}
	for seed := uint64(4); seed < 4+spikeSeedsN; seed++ {
		if err := ctx.Err(); err != nil {
			return t, err
		}
		fmt.Fprintf(os.Stderr, "bench: p: spike, seed %d\n", seed)
		c, err := replay.CompareScenario(spec, tracegen.SpikeScenario(predictStep, seed), predictModel(), replay.DefaultPrediction(), replay.DefaultHistoryStep)
		if err != nil {
			return t, err
		}
		s := c.Summaries(predictStep, nil)
		r, p, o := s[0], s[1], s[2]
		t.Rows = append(t.Rows, []string{fmt.Sprint(seed),
			fmt.Sprintf("%.0f / %.0f / %.0f", r.PodSecondsShort, p.PodSecondsShort, o.PodSecondsShort), ratio(p.PodSecondsShort, r.PodSecondsShort),
			fmt.Sprintf("%s / %s", r.AboveTarget, p.AboveTarget), ratio(p.ReplicaHours, r.ReplicaHours), worseCell(c)})
	}
	return t, nil
}

// worseSteps counts the steps where the predictive run had fewer ready pods than the load needed
// and fewer than the reactive run had, and of those the steps where its per-pod load was also
// beyond the tolerance (the band inside which the algorithm deliberately leaves the replicas
// alone) while the reactive run's was not: where the forecast left it under-provisioned by the
// autoscaler's own measure and reactive was not.
func worseSteps(c replay.Comparison) (int, int) {
	target := replay.TargetPerPod(c.Spec.Metrics[0].Target, nil)
	beyond := func(st replay.Step) bool {
		return st.Ready == 0 || st.Load[0]/float64(st.Ready) > target*(1+replicas.DefaultTolerance)
	}
	n, worse := 0, 0
	for i, p := range c.Steps[replay.Predictive] {
		r := c.Steps[replay.Reactive][i]
		need := math.Ceil(p.Load[0] / target)
		if float64(p.Ready) < need && p.Ready < r.Ready {
			n++
			if beyond(p) && !beyond(r) {
				worse++
			}
		}
	}
	return n, worse
}

// worseCell shows worseSteps.
func worseCell(c replay.Comparison) string {
	n, worse := worseSteps(c)
	return fmt.Sprintf("%d / %d", n, worse)
}

// ratio is a ÷ b with two decimals, n/a for 0 ÷ 0.
func ratio(a, b float64) string {
	if b == 0 {
		if a == 0 {
			return "1.00"
		}
		return "n/a"
	}
	return stats.Num(a/b, 2)
}

// writeChart writes c's comparison plot.
func writeChart(path string, c replay.Comparison) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer f.Close()
	if err := replay.WriteComparisonSVG(f, c, nil); err != nil {
		return err
	}
	return f.Close()
}

// predictIntro is scenario p's introduction: the spec, the model, the runs and the rows.
func predictIntro() string {
	return fmt.Sprintf("Each trace (four weeks of history, then the day replayed; `pkg/replay/tracegen`) is replayed with `podpilot replay`'s "+
		"code: one PodAutoscaler (zdns_vanguard_qps, averageValue %s, 1 to 40 replicas, default behavior), a decision every %s, "+
		"new pods ready %s after the decision (the lead time is that plus one sync period). *reactive* runs the metrics alone, "+
		"*predictive* adds the forecast (%s, refitted every %s on the history at %s resolution) as ScaleOut, *oracle* adds the "+
		"real load one lead time ahead. Ratios are predictive ÷ reactive and predictive ÷ oracle. WAPE is at the lead time, "+
		"against seasonal-naive (the same time last week) and persistence (the load now, one lead later, at the steps the model "+
		"answered); the model acts only where it scored ≤ %.2f× persistence's WAPE over the day before, and over the last %s too "+
		"wherever its WAPE there exceeds %.1f× its day's, with headroom ≤ %.0f%%. "+
		"Churn is rescales and pod starts per hour. Besides the traces of `tracegen.Scenarios`, the diurnal trace is read through an "+
		"External and an Object metric (averageValue %s, the same load as the metric's value), the diurnal day through a gauge "+
		"scraped every %s (answered for %s after each scrape, as Prometheus's lookback does), and a holiday week then an "+
		"ordinary one is replayed whole, with its cost per day.",
		predictTarget, predictStep, predictReadyTime, replay.DefaultPrediction().Method, replay.DefaultPrediction().Refresh, replay.DefaultHistoryStep,
		forecast.PersistenceMargin, forecast.RecentSkillWindow, forecast.RecentErrorFactor, 100*forecast.MaxHeadroom, predictTarget, slowCadence, slowLookback)
}
