package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/bench/internal/stats"
	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/replay"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
)

// The slow-cadence gauge: scraped every slowCadence, answered by Prometheus for slowLookback (its
// default lookback) after each scrape.
const (
	slowCadence  = 10 * time.Minute
	slowLookback = 5 * time.Minute
)

// predictCase is one row of scenario p's table: a trace replayed with a spec.
type predictCase struct {
	// name names the row; file the row's plot.
	name, file string
	spec       replay.Spec
	sc         tracegen.Scenario
}

// predictCases are scenario p's rows: every trace of tracegen.Scenarios with spec, the diurnal
// trace read through an External and an Object metric instead of the Pods one, the slow-cadence
// gauge and the holiday week followed by an ordinary one.
func predictCases(spec replay.Spec) ([]predictCase, error) {
	var out []predictCase
	scs := tracegen.Scenarios(predictStep)
	for _, sc := range scs {
		out = append(out, predictCase{name: sc.Name, file: sc.Name, spec: spec, sc: sc})
	}
	external, err := replay.SpecOf("ppa-external", predictionPA(func(s *podpilotv1alpha1.PodAutoscalerSpec) {
		s.ExternalMetrics = []podpilotv1alpha1.ExternalMetricSpec{{MetricName: "vanguard_queries_per_second",
			TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse(predictTarget))}}
	}))
	if err != nil {
		return nil, err
	}
	object, err := replay.SpecOf("ppa-object", predictionPA(func(s *podpilotv1alpha1.PodAutoscalerSpec) {
		s.ObjectMetrics = []podpilotv1alpha1.ObjectMetricSpec{{MetricName: "requests_per_second",
			TargetType: podpilotv1alpha1.AverageValueTarget, AverageValue: ptr.To(resource.MustParse(predictTarget)),
			DescribedObject: podpilotv1alpha1.MetricObjectReference{APIVersion: "v1", Kind: "Service", Name: "vg1-vanguard"}}}
	}))
	if err != nil {
		return nil, err
	}
	return append(out,
		predictCase{name: "diurnal, External (AverageValue)", file: "diurnal-external", spec: external, sc: scs[0]},
		predictCase{name: "diurnal, Object (AverageValue)", file: "diurnal-object", spec: object, sc: scs[0]},
		predictCase{name: "slow-gauge", file: "slow-gauge", spec: spec, sc: tracegen.SlowGaugeScenario(predictStep, slowCadence, slowLookback)},
		predictCase{name: "holiday-week (2 weeks)", file: "holiday-week", spec: spec, sc: tracegen.HolidayWeekScenario(predictStep)},
	), nil
}

// predictionPA is scenario p's PodAutoscaler (PredictionSpec's) without its metric, which set adds.
func predictionPA(set func(*podpilotv1alpha1.PodAutoscalerSpec)) *podpilotv1alpha1.PodAutoscaler {
	pa := &podpilotv1alpha1.PodAutoscaler{Spec: podpilotv1alpha1.PodAutoscalerSpec{
		ScaleTargetKind: podpilotv1alpha1.ScaleTargetDeployment, ScaleTargetName: "vg1-vanguard",
		MinReplicas: ptr.To[int32](1), MaxReplicas: 40,
		Prediction: &podpilotv1alpha1.PredictionSpec{Mode: podpilotv1alpha1.PredictionScaleOut},
	}}
	set(&pa.Spec)
	return pa
}

// predictRow is c's row in scenario p's table, and replay's warning when too many of its steps
// had no data ("" otherwise).
func predictRow(name string, c replay.Comparison) ([]string, string) {
	s := c.Summaries(predictStep, nil)
	r, p, o := s[0], s[1], s[2]
	row := append(comparisonCells(name, c), persistenceCell(c),
		fmt.Sprintf("%s / %s", r.AboveTarget, p.AboveTarget),
		fmt.Sprintf("%s / %s / %s (%s)", stats.Num(r.RescalesPerHour(), 1), stats.Num(p.RescalesPerHour(), 1), stats.Num(o.RescalesPerHour(), 1),
			ratio(p.RescalesPerHour(), r.RescalesPerHour())),
		fmt.Sprintf("%s / %s / %s", stats.Num(r.PodStartsPerHour(), 1), stats.Num(p.PodStartsPerHour(), 1), stats.Num(o.PodStartsPerHour(), 1)),
		worseCell(c),
		fmt.Sprintf("%d of %d (%s%%)", p.StepsWithoutData, p.Steps, stats.Num(100*float64(p.StepsWithoutData)/float64(p.Steps), 0)))
	p.Name = name
	warning, _ := replay.NoDataWarning(p)
	return row, warning
}

// predictHeadline is the closing note's line for the rows it has one for.
func predictHeadline(name string, c replay.Comparison) []string {
	s := c.Summaries(predictStep, nil)
	r, p, o := s[0], s[1], s[2]
	switch name {
	case "diurnal":
		return []string{fmt.Sprintf("p: on the diurnal trace (lead %s), ScaleOut leaves %s× reactive's pod-seconds short of target "+
			"at %s× its replica-hours (%s× the oracle's), rescaling %s× as often; WAPE %s× seasonal-naive's at the history's 1m (%s× at 15s), "+
			"%s× persistence's",
			c.LeadTime, ratio(p.PodSecondsShort, r.PodSecondsShort), ratio(p.ReplicaHours, r.ReplicaHours), ratio(p.ReplicaHours, o.ReplicaHours),
			ratio(p.RescalesPerHour(), r.RescalesPerHour()),
			stats.Num(c.ModelPerStep.WAPE()/c.NaivePerStep.WAPE(), 2), stats.Num(c.Model.WAPE()/c.Naive.WAPE(), 2),
			stats.Num(c.Model.WAPE()/c.Persistence.WAPE(), 2))}
	case "weak":
		return []string{fmt.Sprintf("p: on the weakly seasonal trace, ScaleOut costs %s× reactive's replica-hours (target ≤ 1.05×) and rescales %s× as often "+
			"(target ≤ 1.5×); the model answered %s of the steps, at %s× persistence's WAPE",
			ratio(p.ReplicaHours, r.ReplicaHours), ratio(p.RescalesPerHour(), r.RescalesPerHour()), answeredShare(c),
			stats.Num(c.Model.WAPE()/c.Persistence.WAPE(), 2))}
	case "slow-gauge":
		return []string{fmt.Sprintf("p: a gauge scraped every %s, read with Prometheus's %s lookback: %d of %d steps without data (replay warns); "+
			"refits refused: %s; the model answered %s of the steps; replica-h p÷r %s, pod-s short p÷r %s",
			slowCadence, slowLookback, p.StepsWithoutData, p.Steps, counts(c.Refused), answeredShare(c),
			ratio(p.ReplicaHours, r.ReplicaHours), ratio(p.PodSecondsShort, r.PodSecondsShort))}
	}
	return nil
}

// answeredShare is the share of steps the model answered, as a percentage.
func answeredShare(c replay.Comparison) string {
	total := 0
	for _, n := range c.Answered {
		total += n
	}
	if total == 0 {
		return "n/a"
	}
	return stats.Num(100*float64(total-c.Answered["none"])/float64(total), 0) + "%"
}

// counts shows a count per reason, "none" without any.
func counts(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(out, ", ")
}
