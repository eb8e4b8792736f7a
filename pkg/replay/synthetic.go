package replay

import (
	"fmt"
	"math"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
)

// CompareScenario compares spec reactive, predictive and oracle over a generated scenario without
// Prometheus: the trace's load is the load of spec's only metric, replayed from sc.From to sc.To
// at the trace's step, and the forecast fits the trace before each refit at historyStep.
func CompareScenario(spec Spec, sc tracegen.Scenario, m Model, p Prediction, historyStep time.Duration) (Comparison, error) {
	if len(spec.Metrics) != 1 {
		return Comparison{}, fmt.Errorf("scenario %s: spec %s has %d metrics, want 1", sc.Name, spec.Name, len(spec.Metrics))
	}
	g, err := sc.Make()
	if err != nil {
		return Comparison{}, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	times := make([]time.Time, len(g.Load))
	for i := range times {
		times[i] = g.Start.Add(time.Duration(i) * g.Step)
	}
	history := Downsample(times, g.Load, g.Start.Truncate(historyStep), historyStep)
	var tr Trace
	for i, t := range times {
		if t.Before(sc.From) || t.After(sc.To) {
			continue
		}
		tr.Times = append(tr.Times, t)
		tr.Actual = append(tr.Actual, math.NaN())
		if len(tr.Loads) == 0 {
			tr.Loads = [][]float64{nil}
		}
		tr.Loads[0] = append(tr.Loads[0], g.Load[i])
	}
	if len(tr.Times) == 0 {
		return Comparison{}, fmt.Errorf("scenario %s: no values between %s and %s", sc.Name, sc.From, sc.To)
	}
	// The workload starts with the replicas its load needs, as if it had been scaled all along.
	tr.Actual[0] = math.Ceil(tr.Loads[0][0] / TargetPerPod(spec.Metrics[0].Target, &m.Requests))
	return Compare(spec, tr, []forecast.Series{history}, m, p)
}
