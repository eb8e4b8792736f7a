package forecast

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// PersistenceMargin is the largest ratio of a model's WAPE to persistence's, at the lead time on
// the recent history, with which the model may act: it must do at least 10% better than
// assuming the load stays as it is now. Chosen by replay (docs/predictive-scaling.md).
const PersistenceMargin = 0.9

// MaxHeadroom is the largest headroom with which a model may act: beyond it, the capacity it
// adds costs more than a reactive target lowered by as much. Chosen by replay
// (docs/predictive-scaling.md).
const MaxHeadroom = 0.25

// SkillWindow is the recent history a model is scored on: its last day.
const SkillWindow = day

// SkillLeads are the lead times a model is scored at when fitted; a lead between them is scored
// as the next one up (the longest beyond).
var SkillLeads = []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	15 * time.Minute, 30 * time.Minute, time.Hour}

// Reasons of a model that may not act; each is the reason of the PredictionActive condition.
const (
	// ReasonNoBetterThanPersistence means the model's WAPE is above PersistenceMargin times
	// persistence's at the lead time.
	ReasonNoBetterThanPersistence = "NoBetterThanPersistence"
	// ReasonHeadroomTooHigh means the model's headroom is above MaxHeadroom.
	ReasonHeadroomTooHigh = "HeadroomTooHigh"
)

var (
	// ErrNoBetterThanPersistence means the model's WAPE is above PersistenceMargin times
	// persistence's at the lead time, on the recent history.
	ErrNoBetterThanPersistence = errors.New("the forecast does no better than persistence")
	// ErrHeadroomTooHigh means the model's headroom is above MaxHeadroom.
	ErrHeadroomTooHigh = errors.New("the forecast's headroom is too high")
)

// Skill is how a model's forecasts one lead ahead fared over the last SkillWindow of its
// history, beside persistence's (the load now, one lead later) and seasonal-naive's (the load
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

// SkillAt is the model's skill at lead: that of the shortest of SkillLeads not below it, the
// longest beyond them; the zero Skill (whose WAPEs are NaN) when the model was not scored.
func (m *Model) SkillAt(lead time.Duration) Skill {
	for _, k := range m.skills {
		if k.Lead >= lead {
			return k
		}
	}
	if len(m.skills) == 0 {
		return Skill{Lead: lead}
	}
	return m.skills[len(m.skills)-1]
}

// Earns returns nil when the model may act at lead: its WAPE at most PersistenceMargin times
// persistence's, and its headroom at most MaxHeadroom; otherwise ErrNoBetterThanPersistence or
// ErrHeadroomTooHigh, with the errors in the message.
func (m *Model) Earns(lead time.Duration) error {
	k := m.SkillAt(lead)
	if r := k.Ratio(); !(r <= PersistenceMargin) {
		return fmt.Errorf("%s WAPE %s against persistence's %s (seasonal-naive's %s) over the last %s at a %s lead, at most %.2fx needed: %w",
			m.Method, pct(k.Model.WAPE()), pct(k.Persistence.WAPE()), pct(k.SeasonalNaive.WAPE()), SkillWindow, k.Lead, PersistenceMargin,
			ErrNoBetterThanPersistence)
	}
	if m.Headroom > MaxHeadroom {
		return fmt.Errorf("%s headroom %s, at most %s (WAPE %s against persistence's %s at a %s lead): %w",
			m.Method, pct(m.Headroom), pct(MaxHeadroom), pct(k.Model.WAPE()), pct(k.Persistence.WAPE()), k.Lead, ErrHeadroomTooHigh)
	}
	return nil
}

// pct formats a fraction as a percentage.
func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// skillScorer scores forecasts made at each step of the last SkillWindow of s, at SkillLeads.
type skillScorer struct {
	s      Series
	from   int
	steps  []int
	skills []Skill
}

// newSkillScorer scores the forecasts made from the start of the last SkillWindow of s.
func newSkillScorer(s Series) *skillScorer {
	sc := &skillScorer{s: s, from: max(0, len(s.Values)-int(SkillWindow/s.Step))}
	for _, l := range SkillLeads {
		sc.steps = append(sc.steps, max(1, int((l+s.Step-1)/s.Step)))
		sc.skills = append(sc.skills, Skill{Lead: l})
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
		sc.skills[j].Model.Add(math.Max(0, ahead(k)), actual)
		sc.skills[j].Persistence.Add(x[i], actual)
		sc.skills[j].SeasonalNaive.Add(naiveAt(Series{Start: sc.s.Start, Step: sc.s.Step, Values: x[:i+1]}, sc.s.Start.Add(time.Duration(i+k)*sc.s.Step)), actual)
	}
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
	m.skills = sc.skills
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
	m.skills = sc.skills
}
