package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// noisy samples sh every minute for span from t0, with relative white noise of sd noise; from
// flatFrom on (when not zero) the load stays at sh's level, as on a holiday that breaks the pattern.
func noisy(sh shape, span time.Duration, noise float64, flatFrom time.Duration) Series {
	r := rand.New(rand.NewPCG(7, 8))
	s := Series{Start: t0, Step: time.Minute}
	for at := t0; at.Before(t0.Add(span)); at = at.Add(time.Minute) {
		v := sh.at(at)
		if flatFrom > 0 && !at.Before(t0.Add(flatFrom)) {
			v = sh.level
		}
		s.Values = append(s.Values, math.Max(0, v*(1+noise*r.NormFloat64())))
	}
	return s
}

// TestAModelActsOnlyIfItBeatsPersistenceByTheMarginWithinTheHeadroomBound: Earns compares the
// model's WAPE one lead ahead over the last day of its history with persistence's (the load now,
// one lead later), and its headroom with MaxHeadroom.
func TestAModelActsOnlyIfItBeatsPersistenceByTheMarginWithinTheHeadroomBound(t *testing.T) {
	sh := shape{level: 1000, daily: 600}
	tests := []struct {
		name string
		s    Series
		lead time.Duration
		want error
	}{
		{name: "a daily pattern that repeats, 2% noise: the model beats persistence and acts",
			s: noisy(sh, 3*day, 0.02, 0), lead: 10 * time.Minute},
		{name: "a last day that broke the pattern (flat, a holiday): persistence is better, the model steps aside",
			s: noisy(sh, 3*day, 0.01, 2*day), lead: 10 * time.Minute, want: ErrNoBetterThanPersistence},
		{name: "a pattern under 40% noise: the model beats persistence but its headroom is above the bound",
			s: noisy(sh, 3*day, 0.4, 0), lead: 10 * time.Minute, want: ErrHeadroomTooHigh},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Fit(tt.s, HoltWinters)
			if err != nil {
				t.Fatal(err)
			}
			k := m.SkillAt(tt.lead)
			t.Logf("WAPE %.3f, persistence %.3f (%.2fx), seasonal-naive %.3f, headroom %.3f", k.Model.WAPE(), k.Persistence.WAPE(), k.Ratio(), k.SeasonalNaive.WAPE(), m.Headroom)
			err = m.Earns(tt.lead)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("Earns = %v, want %v", err, tt.want)
			}
			if err != nil && Reason(err) == "" {
				t.Errorf("Reason(%v) is empty, want the condition's reason", err)
			}
		})
	}
}

// TestSkillIsScoredAtTheNextLeadUp: a lead between SkillLeads is scored as the next one up, one
// beyond them as the longest, and the WAPEs of every method are known on a full history.
func TestSkillIsScoredAtTheNextLeadUp(t *testing.T) {
	s := noisy(shape{level: 1000, daily: 600}, 3*day, 0.02, 0)
	tests := []struct {
		name   string
		method Method
		lead   time.Duration
		want   time.Duration
	}{
		{name: "HoltWinters, 2m15s: scored at 3m", method: HoltWinters, lead: 2*time.Minute + 15*time.Second, want: 3 * time.Minute},
		{name: "SeasonalProfile, 15s: scored at 1m", method: SeasonalProfile, lead: 15 * time.Second, want: time.Minute},
		{name: "SeasonalNaive, 2h: scored at the longest, 1h", method: SeasonalNaive, lead: 2 * time.Hour, want: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Fit(s, tt.method)
			if err != nil {
				t.Fatal(err)
			}
			k := m.SkillAt(tt.lead)
			if k.Lead != tt.want {
				t.Errorf("scored lead = %s, want %s", k.Lead, tt.want)
			}
			if n := int(SkillWindow / s.Step); k.Model.N < n/2 || k.Persistence.N != k.Model.N || k.SeasonalNaive.N != k.Model.N {
				t.Errorf("pairs scored: model %d, persistence %d, seasonal-naive %d; want the same, about %d", k.Model.N, k.Persistence.N, k.SeasonalNaive.N, n)
			}
			if math.IsNaN(k.Ratio()) {
				t.Errorf("ratio to persistence is NaN")
			}
		})
	}
}
