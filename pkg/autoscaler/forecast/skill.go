package forecast

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// PersistenceMargin is the largest ratio of a model's WAPE to persistence's, at the lead time over
// the day and the recent window, with which the model may act: it must do at least 10% better than
// assuming the load stays as it is now. Chosen by replay (docs/predictive-scaling.md).
const PersistenceMargin = 0.9

// MaxHeadroom is the largest headroom with which a model may act: beyond it, the capacity it
// adds costs more than a reactive target lowered by as much. Chosen by replay
// (docs/predictive-scaling.md).
const MaxHeadroom = 0.25

// SkillWindow is the history a model is scored on first: its last day.
const SkillWindow = day

// RecentSkillWindow is the history a model is scored on besides its day: the forecasts for
// times within the last two hours of its history, so that a day that stops following the
// pattern (a holiday) fails within two hours of the break, where the day's score needs hours
// more of it.
// Chosen by replay (docs/predictive-scaling.md).
const RecentSkillWindow = 2 * time.Hour

// MinRecentShare is the least share of RecentSkillWindow's steps that must be scored for the
// recent window to judge the model: with fewer, the day's score judges alone.
const MinRecentShare = 0.5

// RecentErrorFactor is how many times its WAPE over the day the model's WAPE over the recent
// window must exceed for that window to judge it: only a model erring well beyond its usual, as
// when the day stops following the pattern, is judged there. A quiet stretch (a flat night),
// where the model errs by no more than usual and persistence by as little, never locks the
// forecast out. Chosen by replay (docs/predictive-scaling.md).
const RecentErrorFactor = 1.6

// SkillLeads are the lead times a model is scored at when fitted; a lead between them is scored
// as the next one up (the longest beyond).
var SkillLeads = []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour}

// Reasons of a model that may not act; each is the reason of the PredictionActive condition.
const (
	// ReasonNoBetterThanPersistence means the model's WAPE is above PersistenceMargin times
	// persistence's at the lead time, over the day or over the recent window (the message says
	// which).
	ReasonNoBetterThanPersistence = "NoBetterThanPersistence"
	// ReasonHeadroomTooHigh means the model's headroom is above MaxHeadroom.
	ReasonHeadroomTooHigh = "HeadroomTooHigh"
)

var (
	// ErrNoBetterThanPersistence means the model's WAPE is above PersistenceMargin times
	// persistence's at the lead time, over SkillWindow or RecentSkillWindow.
	ErrNoBetterThanPersistence = errors.New("the forecast does no better than persistence")
	// ErrHeadroomTooHigh means the model's headroom is above MaxHeadroom.
	ErrHeadroomTooHigh = errors.New("the forecast's headroom is too high")
)

// Skill is how a model's forecasts one lead ahead fared over the last SkillWindow (or
// RecentSkillWindow) of its history, beside persistence's (the load now, one lead later) and seasonal-naive's (the load
// at the same time last week, or day).
type Skill struct {
	// Lead is the lead time scored.
	Lead time.Duration
	// Model, Persistence and SeasonalNaive are the accuracies of the three forecasts.
	Model, Persistence, SeasonalNaive Accuracy
}

// Ratio is the model's WAPE over persistence's; NaN when either is not known, +Inf when
// persistence made no error.
func (k Skill) Ratio() float64 {
	p := k.Persistence.WAPE()
	if p == 0 {
		return math.Inf(1)
	}
	return k.Model.WAPE() / p
}

// SkillAt is the model's skill at lead over SkillWindow: that of the shortest of SkillLeads not
// below it, the longest beyond them; the zero Skill (whose WAPEs are NaN) when the model was not
// scored.
func (m *Model) SkillAt(lead time.Duration) Skill { return skillAt(m.skills, lead) }

// RecentSkillAt is the model's skill at lead over RecentSkillWindow, as SkillAt.
func (m *Model) RecentSkillAt(lead time.Duration) Skill { return skillAt(m.recent, lead) }

// skillAt returns the skill of ks at the shortest lead not below lead, the longest beyond them.
func skillAt(ks []Skill, lead time.Duration) Skill {
	for _, k := range ks {
		if k.Lead >= lead {
			return k
		}
	}
	if len(ks) == 0 {
		return Skill{Lead: lead}
	}
	return ks[len(ks)-1]
}

// Earns returns nil when the model may act at lead: its WAPE at most PersistenceMargin times
// persistence's over the day, and over the recent window too when that window judges it
// (recentJudges), and its headroom at most MaxHeadroom; otherwise ErrNoBetterThanPersistence,
// naming the window that failed, or ErrHeadroomTooHigh, with the errors in the message.
func (m *Model) Earns(lead time.Duration) error {
	k := m.SkillAt(lead)
	if !(k.Ratio() <= PersistenceMargin) {
		return fmt.Errorf("%s WAPE %s against persistence's %s (seasonal-naive's %s) over the day (the last %s) at a %s lead, at most %.2fx needed: %w",
			m.Method, pct(k.Model.WAPE()), pct(k.Persistence.WAPE()), pct(k.SeasonalNaive.WAPE()), SkillWindow, k.Lead, PersistenceMargin,
			ErrNoBetterThanPersistence)
	}
	if r := m.RecentSkillAt(lead); m.recentJudges(r, k) && !(r.Ratio() <= PersistenceMargin) {
		return fmt.Errorf("%s WAPE %s against persistence's %s (seasonal-naive's %s) over the recent window (the last %s) at a %s lead, at most %.2fx needed (over the day %s against %s): %w",
			m.Method, pct(r.Model.WAPE()), pct(r.Persistence.WAPE()), pct(r.SeasonalNaive.WAPE()), RecentSkillWindow, r.Lead, PersistenceMargin,
			pct(k.Model.WAPE()), pct(k.Persistence.WAPE()), ErrNoBetterThanPersistence)
	}
	if m.Headroom > MaxHeadroom {
		return fmt.Errorf("%s headroom %s, at most %s (WAPE %s against persistence's %s at a %s lead): %w",
			m.Method, pct(m.Headroom), pct(MaxHeadroom), pct(k.Model.WAPE()), pct(k.Persistence.WAPE()), k.Lead, ErrHeadroomTooHigh)
	}
	return nil
}

// recentJudges tells whether the recent skill r may judge the model beside its day's skill k: at
// least MinRecentShare of RecentSkillWindow's steps scored, and the model's WAPE there above
// RecentErrorFactor times its day's. A recent window without enough points, or one where the
// model erred no more than it usually does (a quiet night, where persistence errs by next to
// nothing too), leaves the verdict to the day's score, which must pass anyway.
func (m *Model) recentJudges(r, k Skill) bool {
	if m.step <= 0 || float64(r.Model.N) < MinRecentShare*float64(RecentSkillWindow/m.step) {
		return false
	}
	return r.Model.WAPE() > RecentErrorFactor*k.Model.WAPE()
}

// pct formats a fraction as a percentage.
func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// skillScorer scores forecasts made at each step of the last SkillWindow of s, at SkillLeads,
// and apart those for times within the last RecentSkillWindow.
type skillScorer struct {
	s Series
	// from is the first step forecasts are scored from, recentFrom the first step of the recent
	// window: a forecast for a time at or after it is scored in recent too.
	from, recentFrom int
	steps            []int
	skills, recent   []Skill
}

// newSkillScorer scores the forecasts made from the start of the last SkillWindow of s, and apart
// those for times within its last RecentSkillWindow: one pass, no more pairs than the day's.
func newSkillScorer(s Series) *skillScorer {
	sc := &skillScorer{s: s, from: max(0, len(s.Values)-int(SkillWindow/s.Step)), recentFrom: max(0, len(s.Values)-int(RecentSkillWindow/s.Step))}
	for _, l := range SkillLeads {
		sc.steps = append(sc.steps, max(1, int((l+s.Step-1)/s.Step)))
		sc.skills = append(sc.skills, Skill{Lead: l})
		sc.recent = append(sc.recent, Skill{Lead: l})
	}
	return sc
}

// add scores, at step i, the forecast ahead(k) of the value k steps later, for each lead
// (ahead is called only within the history), beside persistence's and seasonal-naive's.
func (sc *skillScorer) add(i int, ahead func(k int) float64) {
	x := sc.s.Values
	if i < sc.from || math.IsNaN(x[i]) {
		return
	}
	for j, k := range sc.steps {
		if i+k >= len(x) || math.IsNaN(x[i+k]) {
			continue
		}
		actual := x[i+k]
		model, naive := math.Max(0, ahead(k)), naiveAt(Series{Start: sc.s.Start, Step: sc.s.Step, Values: x[:i+1]}, sc.s.Start.Add(time.Duration(i+k)*sc.s.Step))
		sc.skills[j].add(model, x[i], naive, actual)
		if i+k >= sc.recentFrom {
			sc.recent[j].add(model, x[i], naive, actual)
		}
	}
}

// add records the model's, persistence's and seasonal-naive's forecasts of actual.
func (k *Skill) add(model, persistence, naive, actual float64) {
	k.Model.Add(model, actual)
	k.Persistence.Add(persistence, actual)
	k.SeasonalNaive.Add(naive, actual)
}

// done sets m's skills to those sc scored.
func (sc *skillScorer) done(m *Model) {
	m.skills, m.recent = sc.skills, sc.recent
}

// scoreProfile scores a model whose forecast is a function of time (SeasonalProfile,
// SeasonalNaive) as AtFrom uses it, anchored on the value at each step. Its profiles were
// fitted on the window scored too: the score flatters it a little.
func (m *Model) scoreProfile(s Series) {
	sc := newSkillScorer(s)
	at := func(i int) float64 { return m.predict(s.Start.Add(time.Duration(i) * s.Step)) }
	for i := sc.from; i < len(s.Values); i++ {
		base := at(i)
		sc.add(i, func(k int) float64 {
			if m.Method == SeasonalNaive {
				return at(i + k)
			}
			return at(i+k) + math.Pow(m.Persistence, float64(k))*(s.Values[i]-base)
		})
	}
	sc.done(m)
}

// scoreHoltWinters scores Holt-Winters with the factors p out of sample: it smooths the history
// again and, at each step of the last SkillWindow, forecasts from the state after that step as a
// model fitted then would, anchored as AtFrom anchors it.
func (m *Model) scoreHoltWinters(d decomposition, p hwParams) {
	sc := newSkillScorer(d.s)
	d.runHoltWinters(p, func(i int, st hwState) {
		if i < sc.from {
			return
		}
		season := func(j int) float64 {
			v := st.daily[d.daySlot[j]]
			if st.weekly != nil {
				v += st.weekly[d.weekSlot[j]]
			}
			return v
		}
		base := st.level + season(i)
		sc.add(i, func(k int) float64 {
			return st.level + float64(k)*st.trend + season(i+k) + math.Pow(m.Persistence, float64(k))*(d.s.Values[i]-base)
		})
	})
	sc.done(m)
}
