package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// workday is an office load: 200 at night, a ramp from 07:00 to 1000 at 08:00, 1000 until 18:00
// and back to 200 by 20:00; from holidayAt on (when not zero, after t0) it stays at holiday, as
// on a holiday that begins then.
func workday(holidayAt time.Duration, holiday float64) func(time.Time) float64 {
	return func(t time.Time) float64 {
		if holidayAt > 0 && !t.Before(t0.Add(holidayAt)) {
			return holiday
		}
		h := float64(t.Sub(t0)%day) / float64(time.Hour)
		switch {
		case h < 7 || h >= 20:
			return 200
		case h < 8:
			return 200 + 800*(h-7)
		case h < 18:
			return 1000
		}
		return 1000 - 400*(h-18)
	}
}

// sampled samples f every minute for span from t0, with 4% relative noise, half of it white and
// half slow (correlated over about five minutes), as tracegen's traces: in a flat stretch the
// load now forecasts the load a few minutes later about as well as any model.
func sampled(f func(time.Time) float64, span time.Duration) Series {
	r := rand.New(rand.NewPCG(11, 12))
	phi, slow := math.Exp(-1.0/5), 0.0
	s := Series{Start: t0, Step: time.Minute}
	for at := t0; at.Before(t0.Add(span)); at = at.Add(time.Minute) {
		slow = phi*slow + math.Sqrt(1-phi*phi)*r.NormFloat64()
		s.Values = append(s.Values, math.Max(0, f(at)*(1+0.04/math.Sqrt2*(slow+r.NormFloat64()))))
	}
	return s
}

// TestAModelActsOnlyIfItAlsoBeatsPersistenceOverTheRecentWindow: besides the day's score, Earns
// scores the model over RecentSkillWindow with the same margin, so that a day that stops
// following the pattern steps the forecast aside within hours; a recent window where the model
// erred no more than it does over its day (a quiet night) does not judge it.
func TestAModelActsOnlyIfItAlsoBeatsPersistenceOverTheRecentWindow(t *testing.T) {
	const lead = 3 * time.Minute
	tests := []struct {
		name   string
		s      Series
		want   error
		window string // the window the message names, "" when the model acts
	}{
		{name: "a weekday that turns into a holiday at 09:00 (the load falls to 600, not 1000) fails the recent window by 11:00 while the day's window still passes",
			s: sampled(workday(3*day+9*time.Hour, 600), 3*day+11*time.Hour), want: ErrNoBetterThanPersistence, window: "over the recent window"},
		{name: "an ordinary weekday at 11:00, its morning ramp in the recent window: the model acts",
			s: sampled(workday(0, 0), 3*day+11*time.Hour)},
		{name: "a quiet night (flat since 20:00) does not lock the forecast out: it acts at 06:00",
			s: sampled(workday(0, 0), 3*day+6*time.Hour)},
		{name: "a quiet night does not lock it out for the ramp: it acts at 07:05, five minutes into the ramp",
			s: sampled(workday(0, 0), 3*day+7*time.Hour+5*time.Minute)},
		{name: "a holiday since midnight, at 20:00: the day's window fails, and the message names it",
			s: sampled(workday(3*day, 200), 3*day+20*time.Hour), want: ErrNoBetterThanPersistence, window: "over the day"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Fit(tt.s, HoltWinters)
			if err != nil {
				t.Fatal(err)
			}
			k, r := m.SkillAt(lead), m.RecentSkillAt(lead)
			t.Logf("day: WAPE %.3f, persistence %.3f (%.2fx); recent: WAPE %.3f, persistence %.3f (%.2fx), %d pairs; headroom %.3f",
				k.Model.WAPE(), k.Persistence.WAPE(), k.Ratio(), r.Model.WAPE(), r.Persistence.WAPE(), r.Ratio(), r.Model.N, m.Headroom)
			err = m.Earns(lead)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("Earns = %v, want %v", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.window) {
				t.Errorf("Earns = %v, want the message to name the window that failed (%q)", err, tt.window)
			}
			if tt.window == "over the recent window" && !(k.Ratio() <= PersistenceMargin) {
				t.Errorf("the day's ratio %.2f, want it within the margin %.2f: the recent window must be what fails", k.Ratio(), PersistenceMargin)
			}
		})
	}
}

// TestTheRecentWindowJudgesOnlyWithEnoughPointsAndAnErrorWellAboveTheDays: too few scored pairs,
// or a model whose WAPE there is not above RecentErrorFactor times its day's, leave the verdict
// to the day's score.
func TestTheRecentWindowJudgesOnlyWithEnoughPointsAndAnErrorWellAboveTheDays(t *testing.T) {
	m := &Model{step: time.Minute}
	// acc is n pairs whose WAPE is wape.
	acc := func(n int, wape float64) Accuracy {
		return Accuracy{AbsError: wape * 1000 * float64(n), AbsActual: 1000 * float64(n), N: n}
	}
	day := Skill{Model: acc(1400, 0.04)}
	need := int(MinRecentShare * float64(RecentSkillWindow/time.Minute))
	tests := []struct {
		name   string
		recent Skill
		want   bool
	}{
		{name: "enough pairs, a WAPE twice the day's: it judges", recent: Skill{Model: acc(need, 0.08)}, want: true},
		{name: "one pair short of the share: the day's score judges alone", recent: Skill{Model: acc(need-1, 0.08)}},
		{name: "no pairs at all (the zero Skill): the day's score judges alone", recent: Skill{}},
		{name: "a WAPE no larger than the day's (a quiet night): the day's score judges alone", recent: Skill{Model: acc(2*need, 0.04)}},
		{name: "a WAPE just at the factor times the day's: the day's score judges alone", recent: Skill{Model: acc(2*need, RecentErrorFactor*0.04)}},
		{name: "no load at all there (WAPE NaN): the day's score judges alone", recent: Skill{Model: Accuracy{N: 2 * need}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.recentJudges(tt.recent, day); got != tt.want {
				t.Errorf("recentJudges = %v, want %v", got, tt.want)
			}
		})
	}
}
