package decision

import (
	"math"
	"testing"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

// wavering runs rounds every 15 s at a steady total load of 42000 qps (21 pods' worth at 2000 per
// pod) from 24 replicas, the forecast asking for 24 replicas (48000 qps) in the first round and at
// 6m30s, for 22 (44000 qps) in every other: the floor wavers around a replica boundary, as bench
// p's diurnal plateau does. restartAt, when positive, drops the history's forecast floors there,
// as a new leader starts without them. It returns the rescales and the lowest replicas held.
func wavering(restartAt time.Duration) (rescales int, lowest int32) {
	current, lowest := int32(24), int32(24)
	var h normalize.History
	for at := time.Duration(0); at <= 9*time.Minute; at += 15 * time.Second {
		fc := 44000.0
		if at == 0 || at == 6*time.Minute+30*time.Second {
			fc = 48000
		}
		if at == restartAt {
			h.ForecastFloors = nil
		}
		d := Decide(Input{SpecReplicas: current, MinReplicas: 1, MaxReplicas: 40, Pods: seedPods(int(current)),
			Metrics: qpsAt(int(current), 42000/int64(current)), Forecast: forecastQPS(ForecastScaleOut, fc), History: h,
			Behavior: &normalize.Behavior{}, Config: DefaultConfig(), Now: now.Add(at)})
		h = d.History
		if d.Rescale {
			h = normalize.RecordScaleEvent(h, &normalize.Behavior{}, current, d.DesiredReplicas, now.Add(at))
			current = d.DesiredReplicas
			rescales++
		}
		lowest = min(lowest, current)
	}
	return rescales, lowest
}

// TestAWaveringForecastDoesNotFlap checks the hysteresis end to end: a floor that wavers around
// a replica boundary holds its top (through ForecastFloorWindow, then by the tolerance, 22 of 24
// being within it) instead of scaling down when the stabilization window has passed and up again
// at the next high round.
func TestAWaveringForecastDoesNotFlap(t *testing.T) {
	if rescales, lowest := wavering(-1); rescales != 0 || lowest != 24 {
		t.Errorf("the wavering forecast rescaled %d times (lowest %d replicas), want none (24 held)", rescales, lowest)
	}
}

// TestAFloorHeldByHysteresisNeverLowersReactive checks that the held floor only ever raises the
// decision: over a grid of remembered floors, ScaleOut decides at least what the metrics alone
// (the same history) decide, and at least what the forecast of the round alone decides;
// ForecastOnly decides exactly what the metrics do.
func TestAFloorHeldByHysteresisNeverLowersReactive(t *testing.T) {
	for current := int32(1); current <= 6; current++ {
		for _, perPod := range []int64{0, 500, 1900, 2500, 6000} {
			for _, fc := range []float64{0, 1000, 7000, 30000, math.NaN()} {
				for _, held := range []int32{0, 1, 3, 8} {
					var h normalize.History
					if held > 0 {
						h.ForecastFloors = []normalize.Recommendation{{Replicas: held, Time: now.Add(-time.Minute)}}
					}
					in := Input{SpecReplicas: current, MinReplicas: 1, MaxReplicas: 10, Pods: seedPods(int(current)),
						Metrics: qpsAt(int(current), perPod), History: h, Config: DefaultConfig(), Now: now}
					alone := Decide(in).DesiredReplicas
					in.Forecast = forecastQPS(ForecastScaleOut, fc)
					got := Decide(in).DesiredReplicas
					in.History.ForecastFloors = nil // a new leader's, or the floor's first round
					fresh := Decide(in).DesiredReplicas
					if got < alone || got < fresh {
						t.Errorf("current %d, %d qps per pod, forecast %g, held %d: ScaleOut decided %d, below the metrics' %d or the round's forecast's %d",
							current, perPod, fc, held, got, alone, fresh)
					}
					in.Forecast, in.History = forecastQPS(ForecastOnly, fc), h
					if got := Decide(in).DesiredReplicas; got != alone {
						t.Errorf("current %d, %d qps per pod, forecast %g, held %d: ForecastOnly decided %d, the metrics %d", current, perPod, fc, held, got, alone)
					}
				}
			}
		}
	}
}

// TestANewLeaderWithoutTheFloorsFailsSafe checks what losing the floors (they are not in the
// status checkpoint) costs: a new leader's floor follows the forecast again, so the wavering
// forecast costs at most one scale-down and one scale-up more, and never fewer replicas than the
// metrics and the round's forecast ask for (22).
func TestANewLeaderWithoutTheFloorsFailsSafe(t *testing.T) {
	for _, restart := range []time.Duration{30 * time.Second, 3 * time.Minute, 6 * time.Minute} {
		rescales, lowest := wavering(restart)
		if rescales > 2 || lowest < 22 {
			t.Errorf("restart at %s: %d rescales, lowest %d replicas; want at most 2, never below 22", restart, rescales, lowest)
		}
	}
}

// TestAForecastFloorWithinTheScaleDownToleranceHoldsTheReplicas checks the forecast's tolerance:
// a held floor below the current replicas by no more than the scale-down tolerance (10% by
// default, or the behavior's) proposes the current replicas, as a metric within its tolerance
// does, so the decision holds them while the metrics fall; a floor further below is its own, and a
// floor above the current replicas raises them at once. The scale-down stabilization window is 0
// so that each round's proposal shows.
func TestAForecastFloorWithinTheScaleDownToleranceHoldsTheReplicas(t *testing.T) {
	noWindow := func() *normalize.Behavior {
		return &normalize.Behavior{ScaleDown: &normalize.Rules{StabilizationWindow: new(time.Duration)}}
	}
	wide := noWindow()
	wide.ScaleDown.Tolerance = new(0.2)
	tests := []struct {
		name     string
		current  int32
		perPod   int64 // each pod's qps: 1000 at 20 replicas is 10 replicas' worth
		forecast float64
		mode     ForecastMode
		behavior *normalize.Behavior
		want     int32
		raised   bool
	}{
		{name: "a floor one replica under 20 holds 20", current: 20, perPod: 1000, forecast: 38000, want: 20, raised: true},
		{name: "a floor at the tolerance's edge (18 of 20, 0.90) holds 20", current: 20, perPod: 1000, forecast: 36000, want: 20, raised: true},
		{name: "a floor beyond the tolerance (17 of 20, 0.85) is its own", current: 20, perPod: 1000, forecast: 34000, want: 17, raised: true},
		{name: "the behavior's scale-down tolerance (0.2) holds 20 at 16", current: 20, perPod: 1000, forecast: 32000, behavior: wide, want: 20, raised: true},
		{name: "at 4 replicas one replica is beyond the tolerance: 3 is its own", current: 4, perPod: 500, forecast: 6000, want: 3, raised: true},
		{name: "a floor above the current replicas raises them at once", current: 20, perPod: 1000, forecast: 44000, want: 22, raised: true},
		{name: "metrics above the held replicas win", current: 20, perPod: 2400, forecast: 38000, want: 24},
		{name: "ForecastOnly: the decision is the metrics'", current: 20, perPod: 1000, forecast: 38000, mode: ForecastOnly, want: 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mode, behavior := ForecastScaleOut, noWindow()
			if tc.mode != "" {
				mode = tc.mode
			}
			if tc.behavior != nil {
				behavior = tc.behavior
			}
			d := Decide(Input{SpecReplicas: tc.current, MinReplicas: 1, MaxReplicas: 40, Pods: seedPods(int(tc.current)),
				Metrics: qpsAt(int(tc.current), tc.perPod), Forecast: forecastQPS(mode, tc.forecast), Behavior: behavior,
				Config: DefaultConfig(), Now: now})
			if d.DesiredReplicas != tc.want || d.Explanation.ForecastRaised != tc.raised {
				t.Errorf("decided %d (forecast raised: %t), want %d (%t); explanation %+v", d.DesiredReplicas,
					d.Explanation.ForecastRaised, tc.want, tc.raised, d.Explanation)
			}
		})
	}
}
