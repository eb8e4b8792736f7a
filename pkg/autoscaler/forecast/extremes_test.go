package forecast

import (
	"errors"
	"math"
	"testing"
	"time"
)

// withValue sets the value at offset from the start of s to v.
func withValue(s Series, offset time.Duration, v float64) Series {
	out := append([]float64(nil), s.Values...)
	out[int(offset/s.Step)] = v
	return Series{Start: s.Start, Step: s.Step, Values: out}
}

func TestHugeValuesAreRefusedNotFitted(t *testing.T) {
	sh := shape{level: 1000, daily: 400}
	tests := []struct {
		name   string
		series Series
	}{{
		name:   "one value above MaxValue (1e155, whose square overflows) is invalid history",
		series: withValue(series(14*day, sh.at), 3*day, 1e155),
	}, {
		name:   "math.MaxFloat64, an exporter's unlimited, is invalid history",
		series: withValue(series(3*day, sh.at), 2*day, math.MaxFloat64),
	}, {
		name:   "a value just above MaxValue is invalid history",
		series: withValue(series(3*day, sh.at), day, MaxValue*1.01),
	}, {
		name:   "a series entirely at MaxFloat64 is invalid history",
		series: series(3*day, func(time.Time) float64 { return math.MaxFloat64 }),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range Methods() {
				m, err := Fit(tc.series, method)
				if !errors.Is(err, ErrInvalidHistory) || m != nil {
					t.Fatalf("Fit(%s) = %v, %v; want no model and %v", method, m, err, ErrInvalidHistory)
				}
			}
		})
	}
}

func TestValuesUpToMaxValueFitOrAreRefusedWithoutAPanic(t *testing.T) {
	sh := shape{level: 1000, daily: 400}
	tests := []struct {
		name   string
		series Series
	}{{
		name:   "one value at MaxValue among a seasonal load gives a finite forecast or a refusal",
		series: withValue(series(14*day, sh.at), 3*day, MaxValue),
	}, {
		name:   "a load at MaxValue's scale gives a finite forecast or a refusal",
		series: series(14*day, func(t time.Time) float64 { return sh.at(t) * MaxValue / 2000 }),
	}, {
		name:   "a load alternating between 0 and MaxValue gives a finite forecast or a refusal",
		series: series(3*day, func(t time.Time) float64 { return MaxValue * float64(t.Unix()/60%2) }),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range Methods() {
				m, err := Fit(tc.series, method)
				if err != nil {
					if Reason(err) == "" {
						t.Errorf("Fit(%s): %v has no reason", method, err)
					}
					continue
				}
				for at := m.End; !at.After(m.End.Add(MaxHorizon)); at = at.Add(7 * time.Minute) {
					v, err := m.AtFrom(at, m.End, MaxValue)
					if err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
						t.Fatalf("%s: AtFrom(%s) = %g without an error", method, at, v)
					}
				}
			}
		})
	}
}

func TestNonFiniteResultsAreErrorsNeverForecasts(t *testing.T) {
	daily := make([]float64, int(24*time.Hour/step))
	tests := []struct {
		name  string
		model Model
	}{
		{name: "a NaN prediction is an error", model: Model{Method: HoltWinters, base: math.NaN(), daily: daily}},
		{name: "a +Inf prediction is an error", model: Model{Method: HoltWinters, base: math.Inf(1), daily: daily}},
		{name: "an empty profile is an error", model: Model{Method: HoltWinters, base: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.model
			m.End, m.step, m.origin, m.slopeUnit = t0, step, t0, step
			if v, err := m.At(t0.Add(time.Hour)); !errors.Is(err, ErrInvalidHistory) {
				t.Errorf("At = %g, %v; want %v", v, err, ErrInvalidHistory)
			}
			if v, err := m.AtFrom(t0.Add(time.Hour), t0, 10); !errors.Is(err, ErrInvalidHistory) {
				t.Errorf("AtFrom = %g, %v; want %v", v, err, ErrInvalidHistory)
			}
		})
	}
}

func TestInterpolateReadsAnEmptyProfileAsNaN(t *testing.T) {
	if v := interpolate(Series{Start: t0, Step: step}, nil, t0); !math.IsNaN(v) {
		t.Errorf("interpolate(empty profile) = %g, want NaN", v)
	}
}

func TestHoltWintersRefusesWhenNoFactorsGiveAFiniteError(t *testing.T) {
	s := series(3*day, func(t time.Time) float64 { return 1e200 * float64(t.Unix()/300%2) })
	d := decompose(s, DefaultSmoothing)
	if err := (&Model{}).setHoltWinters(d); !errors.Is(err, ErrInvalidHistory) {
		t.Errorf("setHoltWinters on values whose errors overflow: %v, want %v", err, ErrInvalidHistory)
	}
}
