package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestOneOutlierDoesNotPoisonTheProfile: the Holt-Winters updates clip each one-step error to a
// bound from the robust decomposition's spread, so one minute at 100× the peak moves the forecast
// of the same time of day five days later by less than 1.2×, where it used to lift it 2.35×.
func TestOneOutlierDoesNotPoisonTheProfile(t *testing.T) {
	sh := shape{level: 1000, daily: 600, weekly: 150}
	peak := sh.level + sh.daily + sh.weekly
	tests := []struct {
		name  string
		span  time.Duration
		spike float64
	}{
		{name: "four weeks of minutes, one minute at 100x the peak five days before", span: 28 * day, spike: 100 * peak},
		{name: "one week of minutes (daily profile only), one minute at 100x the peak five days before", span: 7 * day, spike: 100 * peak},
		{name: "four weeks of minutes, one minute at 10x the peak five days before", span: 28 * day, spike: 10 * peak},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, 4))
			clean := Series{Start: t0, Step: time.Minute}
			for at := t0; at.Before(t0.Add(tt.span)); at = at.Add(time.Minute) {
				clean.Values = append(clean.Values, math.Max(0, sh.at(at)*(1+0.03*r.NormFloat64())))
			}
			// The forecast is for an hour after the history's end; the outlier is at that time of
			// day five days before.
			target := clean.End().Add(time.Hour)
			outlier := Series{Start: clean.Start, Step: clean.Step, Values: append([]float64(nil), clean.Values...)}
			outlier.Values[int(target.Add(-5*day).Sub(t0)/time.Minute)] = tt.spike
			want := fitAt(t, clean, target)
			got := fitAt(t, outlier, target)
			t.Logf("with the outlier %.0f, without %.0f: %.3fx", got, want, got/want)
			if ratio := got / want; ratio > 1.2 || ratio < 1/1.2 {
				t.Errorf("forecast with the outlier = %.0f, without = %.0f: %.2fx, want within 1.2x", got, want, ratio)
			}
		})
	}
}

// fitAt fits Holt-Winters on s and returns its forecast at t.
func fitAt(t *testing.T, s Series, at time.Time) float64 {
	t.Helper()
	m, err := Fit(s, HoltWinters)
	if err != nil {
		t.Fatal(err)
	}
	v, err := m.At(at)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
