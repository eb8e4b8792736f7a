package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// withFlatDays samples sh every minute for span from t0 with relative white noise of sd noise;
// on the days flat (counted from t0) the load stays at sh's level: holidays that break the pattern.
func withFlatDays(sh shape, span time.Duration, noise float64, flat ...int) Series {
	r := rand.New(rand.NewPCG(11, 12))
	s := Series{Start: t0, Step: time.Minute}
	for at := t0; at.Before(t0.Add(span)); at = at.Add(time.Minute) {
		v := sh.at(at)
		for _, d := range flat {
			if int(at.Sub(t0)/day) == d {
				v = sh.level
			}
		}
		s.Values = append(s.Values, math.Max(0, v*(1+noise*r.NormFloat64())))
	}
	return s
}

// TestTheHeadroomForgetsADayThatBrokeThePattern: the headroom is the 90th percentile of the
// last week's relative errors without the days whose errors were far larger than the others'
// (a holiday): after a holiday, it stays near an ordinary week's.
func TestTheHeadroomForgetsADayThatBrokeThePattern(t *testing.T) {
	sh := shape{level: 1000, daily: 600}
	tests := []struct {
		name string
		span time.Duration
		flat []int
	}{
		{name: "a holiday three days before the history's end", span: 21 * day, flat: []int{18}},
		{name: "two holidays in the last week", span: 21 * day, flat: []int{15, 18}},
		// A day counted back from noon would hold half of the holiday, and the next day the other half.
		{name: "a holiday in a history that ends at noon", span: 21*day + 12*time.Hour, flat: []int{18}},
		{name: "three holidays in a row in a history that ends at noon", span: 21*day + 12*time.Hour, flat: []int{16, 17, 18}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ordinary, m := fitWithAndWithoutBrokenDays(t, sh, tt.span, tt.flat)
			t.Logf("headroom %.3f, an ordinary week's %.3f", m.Headroom, ordinary.Headroom)
			if m.Headroom > 1.1*ordinary.Headroom+0.002 {
				t.Errorf("headroom after the holiday %.3f, want within 1.1x of an ordinary week's %.3f", m.Headroom, ordinary.Headroom)
			}
		})
	}
}

// TestThePersistenceForgetsADayThatBrokeThePattern: the persistence (how much of the load's
// deviation from the forecast lasts one step later) is measured on the last week without the days
// that broke the pattern, nor the half-days around them whose level they pull: a holiday's
// deviation lasts all day, and counted it would make the forecast follow the noise of the load now
// for the week after.
func TestThePersistenceForgetsADayThatBrokeThePattern(t *testing.T) {
	sh := shape{level: 1000, daily: 600}
	tests := []struct {
		name string
		span time.Duration
		flat []int
	}{
		{name: "a holiday three days before the history's end", span: 21 * day, flat: []int{18}},
		{name: "two holidays in the last week", span: 21 * day, flat: []int{15, 18}},
		{name: "three holidays in a row in a history that ends at noon", span: 21*day + 12*time.Hour, flat: []int{16, 17, 18}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ordinary, m := fitWithAndWithoutBrokenDays(t, sh, tt.span, tt.flat)
			t.Logf("persistence %.3f, an ordinary week's %.3f", m.Persistence, ordinary.Persistence)
			if m.Persistence > ordinary.Persistence+0.1 {
				t.Errorf("persistence after the holiday %.3f, want within 0.1 of an ordinary week's %.3f", m.Persistence, ordinary.Persistence)
			}
		})
	}
}

// fitWithAndWithoutBrokenDays fits the span of sh with 3% noise twice: as an ordinary history,
// and with the days flat run flat (holidays that broke the pattern).
func fitWithAndWithoutBrokenDays(t *testing.T, sh shape, span time.Duration, flat []int) (ordinary, broken *Model) {
	t.Helper()
	ordinary, err := Fit(withFlatDays(sh, span, 0.03), HoltWinters)
	if err != nil {
		t.Fatal(err)
	}
	broken, err = Fit(withFlatDays(sh, span, 0.03, flat...), HoltWinters)
	if err != nil {
		t.Fatal(err)
	}
	return ordinary, broken
}
