package forecast

import (
	"fmt"
	"math"
	"time"
)

// Method names a forecasting model.
type Method string

const (
	// SeasonalProfile is the robust seasonal decomposition: a daily profile and a weekly adjustment
	// (medians over the cycles of the history), the level of the last hour and a Theil–Sen trend
	// of the daily levels.
	SeasonalProfile Method = "SeasonalProfile"
	// HoltWinters is additive exponential smoothing with a level, a trend, and a daily and a weekly
	// season (Taylor's double-seasonal Holt-Winters) started from the robust decomposition, its
	// smoothing factors chosen by grid search. The model podpilot uses, chosen by measurement in
	// replay (see docs/predictive-scaling.md).
	HoltWinters Method = "HoltWinters"
	// SeasonalNaive repeats the value of the same time last week (a day, with less than a week and
	// a horizon of history): the baseline the others are measured against.
	SeasonalNaive Method = "SeasonalNaive"
)

// Methods lists the methods, the default first.
func Methods() []Method { return []Method{HoltWinters, SeasonalProfile, SeasonalNaive} }

// HeadroomQuantile is the quantile of the recent relative errors Upper covers.
const HeadroomQuantile = 0.9

// DefaultSmoothing is the width, in steps, of the moving average over the profile.
const DefaultSmoothing = 3

// Key identifies one fitted history: what is distinct for the fitting cost. Many PodAutoscalers
// on the same metric and selector share one model.
type Key struct {
	// Namespace is the namespace of the metric's query.
	Namespace string
	// Metric is the metric's kind and name, e.g. "Pods/zdns_vanguard_qps".
	Metric string
	// Selector is the canonical string of the label selector the query is rendered with.
	Selector string
}

// Model is a forecast fitted on one history.
type Model struct {
	// Method is the model's method.
	Method Method
	// End is the end of the history: forecasts are for times in [End, End+MaxHorizon].
	End time.Time
	// Weekly tells whether the weekly pattern was fitted (MinWeeklyHistory of history or more).
	Weekly bool
	// Strength is the share of the deseasonalized variance the season explains, 0 to 1.
	Strength float64
	// Headroom is how far above the forecast the load has come, relatively, at HeadroomQuantile
	// of the last week's errors: Upper adds it, so that capacity covers the load that often.
	Headroom float64
	// Persistence is how much of the current deviation from the forecast lasts one step of the
	// history later (the remainder's lag-one autocorrelation); AtFrom decays it over the horizon.
	Persistence float64
	// step is the history's step.
	step time.Duration
	// The fitted state, all a forecast reads (kilobytes, not the history's decomposition): the
	// forecast at t is base + slope × (t − origin) / slopeUnit + the daily profile at t + the
	// weekly adjustment at t (nil without one). SeasonalNaive reads naive instead.
	origin      time.Time
	base, slope float64
	slopeUnit   time.Duration
	daily       []float64
	weekly      []float64
	// naive is the history SeasonalNaive repeats (the baseline); empty for the other methods.
	naive Series
	// skills are the model's scores at SkillLeads on the last SkillWindow of its history, recent
	// those on its last RecentSkillWindow.
	skills, recent []Skill
}

// Bytes is about how many bytes m holds (0 for nil): the model cache reports it.
func (m *Model) Bytes() int64 {
	if m == nil {
		return 0
	}
	const fields = 208 // the struct and its slice headers
	const skill = 80   // a Skill: a lead and three accuracies
	return fields + 8*int64(cap(m.daily)+cap(m.weekly)+cap(m.naive.Values)) + skill*int64(cap(m.skills)+cap(m.recent))
}

// predict returns the forecast at t, before it is bounded below by 0.
func (m *Model) predict(t time.Time) float64 {
	if m.Method == SeasonalNaive {
		return naiveAt(m.naive, t)
	}
	s := Series{Step: m.step}
	v := m.base + m.slope*float64(t.Sub(m.origin))/float64(m.slopeUnit) + interpolate(s, m.daily, t)
	if m.weekly != nil {
		v += interpolate(s, m.weekly, t)
	}
	return v
}

// Fit checks the history and fits method on it. When the history is too short, too gappy or
// not seasonal, it returns an error Reason names and no model: the forecast is then off.
func Fit(s Series, method Method) (*Model, error) {
	s, err := check(s)
	if err != nil {
		return nil, err
	}
	d := decompose(s, DefaultSmoothing)
	if math.IsNaN(d.strength) {
		return nil, fmt.Errorf("the seasonal strength is not a number: %w", ErrInvalidHistory)
	}
	if !(d.strength >= MinSeasonalStrength) {
		return nil, fmt.Errorf("the daily and weekly pattern explains %.0f%% of the variance, at least %.0f%% needed: %w",
			100*d.strength, 100*MinSeasonalStrength, ErrNotSeasonal)
	}
	lw := d.lastWeek()
	m := &Model{Method: method, End: s.End(), Weekly: d.weekly != nil, Strength: d.strength, Headroom: d.headroom(HeadroomQuantile, lw),
		Persistence: d.persistence(lw), step: s.Step}
	if !finite(m.Headroom) || !finite(m.Persistence) {
		return nil, fmt.Errorf("headroom %g, persistence %g: %w", m.Headroom, m.Persistence, ErrInvalidHistory)
	}
	switch method {
	case SeasonalProfile:
		m.setProfile(d)
		m.scoreProfile(s)
	case HoltWinters:
		if err := m.setHoltWinters(d); err != nil {
			return nil, err
		}
	case SeasonalNaive:
		m.naive = s
		m.scoreProfile(s)
	default:
		return nil, fmt.Errorf("unknown method %q: %w", method, ErrInvalidHistory)
	}
	return m, nil
}

// finite tells whether v is neither NaN nor infinite.
func finite(v float64) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0)
}

// At returns the forecast load at t, never negative; a prediction that is not a finite number
// is an error (ErrInvalidHistory), never a forecast.
func (m *Model) At(t time.Time) (float64, error) {
	if t.Before(m.End.Add(-time.Second)) || t.After(m.End.Add(MaxHorizon)) {
		return 0, fmt.Errorf("%s, history ends %s: %w", t.UTC().Format(time.RFC3339), m.End.UTC().Format(time.RFC3339), ErrBeyondHorizon)
	}
	v := m.predict(t)
	if !finite(v) {
		return 0, fmt.Errorf("forecast %g at %s: %w", v, t.UTC().Format(time.RFC3339), ErrInvalidHistory)
	}
	return math.Max(0, v), nil
}

// AtFrom returns the forecast at t anchored on the load observed at now (a round's current
// value): the deviation of current from the forecast at now carries into t, decaying by
// Persistence per history step. A NaN current leaves the forecast as At; a result that is not a
// finite number (a current value near the largest float64) is an error.
func (m *Model) AtFrom(t, now time.Time, current float64) (float64, error) {
	v, err := m.At(t)
	if err != nil || math.IsNaN(current) || now.Before(m.End.Add(-m.step)) {
		return v, err
	}
	base, err := m.At(now)
	if err != nil {
		return v, nil
	}
	decay := math.Pow(m.Persistence, float64(t.Sub(now))/float64(m.step))
	out := v + decay*(current-base)
	if !finite(out) {
		return 0, fmt.Errorf("forecast %g at %s from the load %g now: %w", out, t.UTC().Format(time.RFC3339), current, ErrInvalidHistory)
	}
	return math.Max(0, out), nil
}

// Upper returns the forecast load at t raised by the model's headroom: the load capacity is
// provisioned for.
func (m *Model) Upper(t time.Time) (float64, error) {
	v, err := m.At(t)
	return v * (1 + m.Headroom), err
}

// setProfile sets m to forecast the recent level, moved by the trend, plus the season.
func (m *Model) setProfile(d decomposition) {
	// The recent level is the median over RecentWindow: it stands for the middle of that window.
	m.base, m.slope, m.slopeUnit, m.origin = d.recentLevel(), d.trendPerDay(), day, d.s.End().Add(-RecentWindow/2)
	m.daily, m.weekly = d.daily, d.weekly
}

// naiveAt repeats the history s one week back from t, or one day back with less than a week and
// MaxHorizon of history, interpolating between values and going back a further period over a gap.
func naiveAt(s Series, t time.Time) float64 {
	period := week
	if time.Duration(len(s.Values))*s.Step < week+MaxHorizon {
		period = day
	}
	at := func(t time.Time) float64 {
		pos := float64(t.Sub(s.Start)) / float64(s.Step)
		i := int(math.Floor(pos))
		if i < 0 || i >= len(s.Values) {
			return math.NaN()
		}
		f := pos - float64(i)
		v0, v1 := s.Values[i], s.Values[min(i+1, len(s.Values)-1)]
		switch {
		case math.IsNaN(v1):
			return v0
		case math.IsNaN(v0):
			return v1
		}
		return (1-f)*v0 + f*v1
	}
	for back := t.Add(-period); !back.Before(s.Start); back = back.Add(-period) {
		if v := at(back); !math.IsNaN(v) {
			return v
		}
	}
	return 0
}
