package scenario

import (
	"math"
	"testing"
	"time"

	"github.com/podpilot/podpilot/pkg/replay"
	"github.com/podpilot/podpilot/pkg/replay/tracegen"
)

func TestPerDaySplitsTheStepsAtUTCMidnightAndScoresTheModelWhereItAnswered(t *testing.T) {
	spec, err := PredictionSpec()
	if err != nil {
		t.Fatal(err)
	}
	mid := time.Date(2026, 11, 5, 0, 0, 0, 0, time.UTC)
	times := []time.Time{mid.Add(-2 * predictStep), mid.Add(-predictStep), mid, mid.Add(predictStep)}
	loads := []float64{1000, 2000, 3000, 4000}
	run := func(replicas ...int32) []replay.Step {
		var out []replay.Step
		for i, at := range times {
			out = append(out, replay.Step{Time: at, Replicas: replicas[i], Ready: replicas[i], Load: []float64{loads[i]}, PerPod: []float64{loads[i] / float64(replicas[i])}})
		}
		return out
	}
	c := replay.Comparison{Spec: spec, LeadTime: predictStep,
		Steps:     map[replay.Variant][]replay.Step{replay.Reactive: run(1, 1, 2, 2), replay.Predictive: run(2, 2, 2, 2), replay.Oracle: run(1, 2, 2, 2)},
		Forecasts: []float64{math.NaN(), 2500, 3000, 4000}}
	days := perDay(tracegen.Scenario{Holidays: []time.Time{mid.Add(time.Hour)}}, c)
	if len(days) != 2 {
		t.Fatalf("got %d days, want 2", len(days))
	}
	h := predictStep.Hours()
	if days[0].holiday || !days[1].holiday {
		t.Errorf("holidays %v, %v: want the second day only", days[0].holiday, days[1].holiday)
	}
	if days[0].r.ReplicaHours != 2*h || days[0].p.ReplicaHours != 4*h || days[1].o.ReplicaHours != 4*h {
		t.Errorf("replica-hours r %g p %g (day 1), o %g (day 2): want %g, %g, %g", days[0].r.ReplicaHours, days[0].p.ReplicaHours, days[1].o.ReplicaHours, 2*h, 4*h, 4*h)
	}
	// Day 1: the model answered at its second step only (2500 for 3000; persistence 2000).
	if days[0].answered != 0.5 || days[0].model.WAPE() != 500.0/3000 || days[0].pers.WAPE() != 1000.0/3000 {
		t.Errorf("day 1: answered %g, WAPE model %g, persistence %g: want 0.5, %g, %g", days[0].answered, days[0].model.WAPE(), days[0].pers.WAPE(), 500.0/3000, 1000.0/3000)
	}
	// Day 2: its last step's lead falls past the trace and is not scored.
	if days[1].model.N != 1 {
		t.Errorf("day 2: %d steps scored, want 1", days[1].model.N)
	}
}
