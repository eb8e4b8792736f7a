package replay

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// Summary condenses one spec's replay.
type Summary struct {
	// Name is the spec's name.
	Name string
	// ReplicaHours is the replayed replicas integrated over time (the cost); ActualReplicaHours
	// is the same for the real replicas over the steps where they are known.
	ReplicaHours, ActualReplicaHours float64
	// AboveTarget is the time during which some metric's load per ready pod was above its target.
	AboveTarget time.Duration
	// PodSecondsShort integrates, over time, the pods missing to bring every metric to its target:
	// max(0, ceil(load / target) - ready pods), the under-provisioning.
	PodSecondsShort float64
	// ScaleUps and ScaleDowns count the replayed rescales.
	ScaleUps, ScaleDowns int
	// PodStarts counts the pods the scale-ups created: every one starts a pod.
	PodStarts int
	// Hours is the time the steps cover (the churn's denominator).
	Hours float64
	// LargestUp and LargestDown are the largest single rescales, in pods.
	LargestUp, LargestDown int32
	// PeakReplicas is the largest replayed replica count.
	PeakReplicas int32
	// Steps counts the steps; StepsWithoutData those where some metric had no data (the decision
	// saw it as failed, as the controller would a failed read).
	Steps, StepsWithoutData int
	// SelfCheck compares the replayed replicas with the real ones.
	SelfCheck SelfCheck
	// Forecast is the forecast's accuracy, for the runs of a comparison; nil otherwise.
	Forecast *ForecastSummary
}

// SelfCheck is the distance between the replayed and the real replica counts, over the steps
// where the real one is known. For a replay of the spec that really ran, it measures the model.
type SelfCheck struct {
	// Compared is the number of steps with a known real replica count.
	Compared int
	// MeanDistance and MaxDistance are the mean and largest |replayed - real|.
	MeanDistance, MaxDistance float64
	// WithinOne is the fraction of compared steps where the two differ by at most one pod.
	WithinOne float64
}

// Summarize computes spec's summary from its steps; step is the time between steps.
func Summarize(spec Spec, steps []Step, step time.Duration, requests *Requests) Summary {
	s := Summary{Name: spec.Name, Steps: len(steps)}
	hours := step.Hours()
	s.Hours = float64(len(steps)) * hours
	var distance float64
	var within int
	prev := int32(-1)
	for _, st := range steps {
		s.ReplicaHours += float64(st.Replicas) * hours
		s.PeakReplicas = max(s.PeakReplicas, st.Replicas)
		short, above := shortfall(spec, st, requests)
		s.PodSecondsShort += short * step.Seconds()
		if slices.ContainsFunc(st.Load, math.IsNaN) {
			s.StepsWithoutData++
		}
		if above {
			s.AboveTarget += step
		}
		if prev >= 0 && st.Replicas != prev {
			s.countRescale(prev, st.Replicas)
		}
		prev = st.Replicas
		if math.IsNaN(st.Actual) {
			continue
		}
		s.ActualReplicaHours += st.Actual * hours
		d := math.Abs(float64(st.Replicas) - st.Actual)
		s.SelfCheck.Compared++
		distance += d
		s.SelfCheck.MaxDistance = max(s.SelfCheck.MaxDistance, d)
		if d <= 1 {
			within++
		}
	}
	if n := s.SelfCheck.Compared; n > 0 {
		s.SelfCheck.MeanDistance, s.SelfCheck.WithinOne = distance/float64(n), float64(within)/float64(n)
	}
	return s
}

// RescalesPerHour is the churn: rescales (up and down) per hour of replay; NaN without steps.
func (s Summary) RescalesPerHour() float64 { return float64(s.ScaleUps+s.ScaleDowns) / s.Hours }

// PodStartsPerHour is the pods the scale-ups started per hour of replay; NaN without steps.
func (s Summary) PodStartsPerHour() float64 { return float64(s.PodStarts) / s.Hours }

// noDataShare is the share of steps without data; NaN without steps.
func (s Summary) noDataShare() float64 {
	if s.Steps == 0 {
		return math.NaN()
	}
	return float64(s.StepsWithoutData) / float64(s.Steps)
}

func (s *Summary) countRescale(from, to int32) {
	if to > from {
		s.ScaleUps++
		s.PodStarts += int(to - from)
		s.LargestUp = max(s.LargestUp, to-from)
		return
	}
	s.ScaleDowns++
	s.LargestDown = max(s.LargestDown, from-to)
}

// shortfall returns the pods missing at st to bring every metric to its target, and whether
// some metric's load per ready pod was above its target.
func shortfall(spec Spec, st Step, requests *Requests) (float64, bool) {
	var short float64
	above := false
	for k, ms := range spec.Metrics {
		target := TargetPerPod(ms.Target, requests)
		if k >= len(st.Load) || math.IsNaN(st.Load[k]) || math.IsNaN(target) {
			continue
		}
		if st.Ready == 0 || st.PerPod[k] > target {
			above = above || st.Load[k] > 0
		}
		short = max(short, math.Ceil(st.Load[k]/target)-float64(st.Ready))
	}
	return short, above
}

// TargetPerPod is a target as a per-pod load in the metric's units: the average value, the value
// of a Value target (whose load is the value times the replicas, see valueLoads), or for a
// Utilization target that share of the pod's (a ContainerResource target: the container's)
// request. NaN when the request is unknown.
func TargetPerPod(t replicas.Target, requests *Requests) float64 {
	switch t.Type {
	case replicas.Value:
		return float64(t.Value) / 1000
	case replicas.Utilization:
		r, ok := requests.of(t)
		if !ok {
			return math.NaN()
		}
		return float64(r) / 1000 * float64(t.Utilization) / 100
	}
	return float64(t.AverageValue) / 1000
}

// Assumptions are the load model's assumptions, printed with every summary.
var Assumptions = []string{
	"load = the per-pod samples summed over the pods that had one (Utilization: cpu/memory usage summed, per-pod level x replicas)",
	"Object and External metrics: the value read (series summed); a Value target's value is a load of value x actual replicas, shared by the ready pods",
	"the load spreads evenly over the replayed pods that are ready; a pod not yet ready carries none",
	"a new pod is ready --ready-delay after the decision that created it; a scale-down removes the newest pods",
	"the load does not depend on the replica count (no retries, no queueing, no feedback)",
	"one decision per --step, with the real algorithm and the step's time as its clock",
}

// NoDataWarnShare is the share of steps without data above which the summary warns: the figures
// then describe a replay that mostly held its replicas for want of data.
const NoDataWarnShare = 0.05

// WriteSummaries prints the summaries side by side, a warning for each whose steps without data
// exceed NoDataWarnShare, then the assumptions.
func WriteSummaries(w io.Writer, ss []Summary, step time.Duration) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(label string, f func(Summary) string) {
		cells := []string{label}
		for _, s := range ss {
			cells = append(cells, f(s))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	row("spec", func(s Summary) string { return s.Name })
	row("replica-hours (replayed)", func(s Summary) string { return fmt.Sprintf("%.2f", s.ReplicaHours) })
	row("replica-hours (actual)", func(s Summary) string { return fmt.Sprintf("%.2f", s.ActualReplicaHours) })
	row("time above target", func(s Summary) string { return s.AboveTarget.String() })
	row("pod-seconds short of target", func(s Summary) string { return fmt.Sprintf("%.0f", s.PodSecondsShort) })
	row("scale events (up/down)", func(s Summary) string {
		return fmt.Sprintf("%d (%d/%d)", s.ScaleUps+s.ScaleDowns, s.ScaleUps, s.ScaleDowns)
	})
	row("rescales / pod starts per hour", func(s Summary) string {
		return fmt.Sprintf("%.1f / %.1f", s.RescalesPerHour(), s.PodStartsPerHour())
	})
	row("largest step (up/down)", func(s Summary) string { return fmt.Sprintf("+%d/-%d", s.LargestUp, s.LargestDown) })
	row("peak replicas", func(s Summary) string { return fmt.Sprint(s.PeakReplicas) })
	row("steps without data (some metric)", func(s Summary) string {
		return fmt.Sprintf("%d of %d (%s)", s.StepsWithoutData, s.Steps, percent(s.noDataShare()))
	})
	row("self-check: mean |replayed-actual|", func(s Summary) string { return fmt.Sprintf("%.2f", s.SelfCheck.MeanDistance) })
	row("self-check: max |replayed-actual|", func(s Summary) string { return fmt.Sprintf("%.0f", s.SelfCheck.MaxDistance) })
	row("self-check: steps within 1 pod", func(s Summary) string {
		return fmt.Sprintf("%.0f%% of %d", 100*s.SelfCheck.WithinOne, s.SelfCheck.Compared)
	})
	writeForecastRows(ss, row)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	warned := map[[2]int]bool{} // a comparison's runs share their trace: one warning
	for _, s := range ss {
		if k := [2]int{s.StepsWithoutData, s.Steps}; !warned[k] {
			if msg, ok := NoDataWarning(s); ok {
				warned[k] = true
				fmt.Fprintf(w, "\nwarning: %s\n", msg)
			}
		}
	}
	fmt.Fprintf(w, "\nassumptions (step %s):\n", step)
	for _, a := range Assumptions {
		fmt.Fprintf(w, "  - %s\n", a)
	}
	return nil
}

// NoDataWarning is the warning for s when its steps without data exceed NoDataWarnShare.
func NoDataWarning(s Summary) (string, bool) {
	if !(s.noDataShare() > NoDataWarnShare) {
		return "", false
	}
	return fmt.Sprintf("%s: %s of the steps had no data for some metric; the decision held there as on a failed read, "+
		"so the figures above mostly describe missing data: check the rule's window against the series' scrape interval, or raise --step",
		s.Name, percent(s.noDataShare())), true
}

// writeForecastRows adds the forecast's rows when some summary is a comparison's run.
func writeForecastRows(ss []Summary, row func(string, func(Summary) string)) {
	if !slices.ContainsFunc(ss, func(s Summary) bool { return s.Forecast != nil }) {
		return
	}
	fc := func(f func(*ForecastSummary) string) func(Summary) string {
		return func(s Summary) string {
			if s.Forecast == nil {
				return "-"
			}
			return f(s.Forecast)
		}
	}
	row("forecast: model, lead time", fc(func(f *ForecastSummary) string { return fmt.Sprintf("%s, %s", f.Method, f.LeadTime) }))
	row("forecast: steps answered, by model", fc(func(f *ForecastSummary) string { return counts(f.Answered) }))
	row("forecast WAPE at the lead time", fc(func(f *ForecastSummary) string { return percent(f.WAPE) }))
	row("persistence WAPE, same steps (ratio)", fc(func(f *ForecastSummary) string {
		return fmt.Sprintf("%s (%.2fx)", percent(f.PersistenceWAPE), f.WAPE/f.PersistenceWAPE)
	}))
	row("seasonal-naive WAPE at the lead time", fc(func(f *ForecastSummary) string { return percent(f.NaiveWAPE) }))
	row("forecast / seasonal-naive WAPE, at the history's step", fc(func(f *ForecastSummary) string {
		return percent(f.WAPEPerStep) + " / " + percent(f.NaiveWAPEPerStep)
	}))
	row("refits refused", fc(func(f *ForecastSummary) string { return counts(f.Refused) }))
}

// counts formats counts by name, "0" without any.
func counts(c map[string]int) string {
	if len(c) == 0 {
		return "0"
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%d %s", c[r], r))
	}
	return strings.Join(parts, ", ")
}

func percent(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}
