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
// a replica boundary holds its top through ForecastFloorWindow instead of scaling down when the
// stabilization window has passed and up again at the next high round.
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
