package forecast

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// t0 is a Monday at midnight UTC.
var t0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)

const step = 5 * time.Minute

// shape is a seasonal load: a level, a trend per day, a daily and a weekly wave.
type shape struct {
	level, trendPerDay, daily, weekly, phase float64
}

func (s shape) at(t time.Time) float64 {
	days := float64(t.Sub(t0)) / float64(day)
	return s.level + s.trendPerDay*days +
		s.daily*math.Sin(2*math.Pi*days+s.phase) + s.weekly*math.Sin(2*math.Pi*days/7)
}

// series samples f every step for span, from t0.
func series(span time.Duration, f func(time.Time) float64) Series {
	s := Series{Start: t0, Step: step}
	for t := t0; t.Before(t0.Add(span)); t = t.Add(step) {
		s.Values = append(s.Values, f(t))
	}
	return s
}

// randomShapes returns n seasonal shapes with random amplitudes and phases, from a fixed seed.
func randomShapes(n int, trend bool) []shape {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]shape, n)
	for i := range out {
		out[i] = shape{level: 500 + 1000*r.Float64(), daily: 100 + 300*r.Float64(), weekly: 100 * r.Float64(), phase: 2 * math.Pi * r.Float64()}
		if trend {
			out[i].trendPerDay = 5 + 20*r.Float64()
		}
	}
	return out
}

// maxRelError is the largest |forecast - truth| / truth over the horizon after the history's end.
func maxRelError(t *testing.T, m *Model, f func(time.Time) float64, horizon time.Duration) float64 {
	t.Helper()
	worst := 0.0
	for at := m.End; !at.After(m.End.Add(horizon)); at = at.Add(time.Minute) {
		got, err := m.At(at)
		if err != nil {
			t.Fatalf("At(%s): %v", at, err)
		}
		worst = math.Max(worst, math.Abs(got-f(at))/f(at))
	}
	return worst
}

// TestSeasonalSeriesIsForecastWithinEpsilon: a noiseless daily and weekly series is forecast within
// ε over the next hour by every method, from three weeks (weekly fitted) and from three days (daily only).
func TestSeasonalSeriesIsForecastWithinEpsilon(t *testing.T) {
	eps := map[Method]float64{SeasonalProfile: 0.02, HoltWinters: 0.02, SeasonalNaive: 0.02}
	for _, span := range []time.Duration{21 * day, 3*day + 7*time.Hour} {
		for i, sh := range randomShapes(8, false) {
			if span < MinWeeklyHistory {
				sh.weekly = 0 // a weekly wave is not a daily pattern; without two weeks it is not fitted
			}
			s := series(span, sh.at)
			for _, method := range Methods() {
				m, err := Fit(s, method)
				if err != nil {
					t.Fatalf("shape %d, %s of history, %s: %v", i, span, method, err)
				}
				if m.Weekly != (span >= MinWeeklyHistory) {
					t.Errorf("shape %d, %s of history: weekly fitted = %v", i, span, m.Weekly)
				}
				if e := maxRelError(t, m, sh.at, time.Hour); e > eps[method] {
					t.Errorf("shape %d, %s of history, %s: worst relative error over the next hour %.4f, want <= %.2f", i, span, method, e, eps[method])
				}
			}
		}
	}
}

// TestTrendIsFollowed: with a trend of 0.5–3% of the level a day, the robust profile and
// Holt-Winters stay within 2% over the next hour; seasonal-naive, which repeats last week, lags
// by a week of trend.
func TestTrendIsFollowed(t *testing.T) {
	for i, sh := range randomShapes(8, true) {
		s := series(16*day+9*time.Hour, sh.at)
		for _, method := range []Method{SeasonalProfile, HoltWinters} {
			m, err := Fit(s, method)
			if err != nil {
				t.Fatalf("shape %d, %s: %v", i, method, err)
			}
			if e := maxRelError(t, m, sh.at, time.Hour); e > 0.02 {
				t.Errorf("shape %d, %s: worst relative error over the next hour %.4f with a trend of %.0f/day, want <= 0.02", i, method, e, sh.trendPerDay)
			}
		}
	}
}

func TestHistoryTheForecastRefuses(t *testing.T) {
	sh := shape{level: 1000, daily: 400}
	noise := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name   string
		series Series
		want   error
		reason string
	}{{
		name:   "less than two days of history is too short",
		series: series(2*day-step, sh.at),
		want:   ErrHistoryTooShort, reason: ReasonHistoryTooShort,
	}, {
		name:   "leading missing values do not count as history",
		series: withGaps(series(3*day, sh.at), 0, 36*time.Hour),
		want:   ErrHistoryTooShort, reason: ReasonHistoryTooShort,
	}, {
		name:   "more than a fifth of the history missing is gappy",
		series: withGaps(series(10*day, sh.at), 3*day, 2*day+time.Hour),
		want:   ErrHistoryGappy, reason: ReasonHistoryGappy,
	}, {
		name:   "more than half of the last hour missing is gappy: the level would be stale",
		series: withGaps(series(10*day, sh.at), 10*day-31*time.Minute, 31*time.Minute),
		want:   ErrHistoryGappy, reason: ReasonHistoryGappy,
	}, {
		name:   "white noise has no daily pattern",
		series: series(14*day, func(time.Time) float64 { return 1000 + 200*noise.NormFloat64() }),
		want:   ErrNotSeasonal, reason: ReasonNotSeasonal,
	}, {
		name:   "a constant load has nothing to forecast",
		series: series(14*day, func(time.Time) float64 { return 700 }),
		want:   ErrNotSeasonal, reason: ReasonNotSeasonal,
	}, {
		name:   "a negative load is invalid",
		series: series(3*day, func(t time.Time) float64 { return sh.at(t) - 2000 }),
		want:   ErrInvalidHistory, reason: ReasonInvalidHistory,
	}, {
		name:   "a step that does not divide a day is invalid",
		series: Series{Start: t0, Step: 7 * time.Minute, Values: make([]float64, 1000)},
		want:   ErrInvalidHistory, reason: ReasonInvalidHistory,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, method := range Methods() {
				m, err := Fit(tc.series, method)
				if !errors.Is(err, tc.want) || m != nil {
					t.Fatalf("Fit(%s) = %v, %v; want no model and %v", method, m, err, tc.want)
				}
				if got := Reason(err); got != tc.reason {
					t.Errorf("Reason(%v) = %q, want %q", err, got, tc.reason)
				}
			}
		})
	}
}

// withGaps marks span of s missing from offset on.
func withGaps(s Series, offset, span time.Duration) Series {
	v := append([]float64(nil), s.Values...)
	for i := int(offset / s.Step); i < int((offset+span)/s.Step) && i < len(v); i++ {
		v[i] = math.NaN()
	}
	return Series{Start: s.Start, Step: s.Step, Values: v}
}

func TestGapsWithinBoundsAreFitted(t *testing.T) {
	sh := shape{level: 1000, daily: 400}
	s := withGaps(series(10*day, sh.at), 4*day, 12*time.Hour)
	for _, method := range Methods() {
		m, err := Fit(s, method)
		if err != nil {
			t.Fatalf("Fit(%s) with 5%% of the history missing: %v", method, err)
		}
		if e := maxRelError(t, m, sh.at, time.Hour); e > 0.02 {
			t.Errorf("%s: worst relative error %.4f after a half-day gap, want <= 0.02", method, e)
		}
	}
}

func TestAtRefusesTimesOutsideTheHorizon(t *testing.T) {
	m, err := Fit(series(3*day, shape{level: 1000, daily: 400}.at), SeasonalProfile)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{m.End.Add(-time.Hour), m.End.Add(MaxHorizon + time.Minute)} {
		if _, err := m.At(at); !errors.Is(err, ErrBeyondHorizon) {
			t.Errorf("At(%s) error = %v, want %v", at, err, ErrBeyondHorizon)
		}
	}
}

func TestForecastIsNeverNegative(t *testing.T) {
	// A deep daily wave that touches zero: the fitted curve may dip below it, the forecast may not.
	sh := shape{level: 100, daily: 100}
	m, err := Fit(series(3*day+18*time.Hour, func(t time.Time) float64 { return math.Max(0, sh.at(t)-5) }), HoltWinters)
	if err != nil {
		t.Fatal(err)
	}
	for at := m.End; at.Before(m.End.Add(MaxHorizon)); at = at.Add(step) {
		if v, _ := m.At(at); v < 0 {
			t.Fatalf("At(%s) = %g, want >= 0", at, v)
		}
	}
}

// TestHeadroomCoversTheNoise: the headroom is the 90th percentile of the relative error, so on a
// series with 5% Gaussian noise it is near 1.28 × 5%, and on a noiseless one near zero.
func TestHeadroomCoversTheNoise(t *testing.T) {
	sh := shape{level: 1000, daily: 400, weekly: 50}
	r := rand.New(rand.NewPCG(7, 8))
	noisy := series(15*day, func(t time.Time) float64 { return sh.at(t) * (1 + 0.05*r.NormFloat64()) })
	clean := series(15*day, sh.at)
	for _, tc := range []struct {
		name   string
		s      Series
		lo, hi float64
	}{
		{name: "5% noise: headroom about 6.4%", s: noisy, lo: 0.05, hi: 0.08},
		{name: "no noise: headroom about 0", s: clean, lo: 0, hi: 0.005},
	} {
		m, err := Fit(tc.s, SeasonalProfile)
		if err != nil {
			t.Fatal(err)
		}
		if m.Headroom < tc.lo || m.Headroom > tc.hi {
			t.Errorf("%s: headroom %.4f, want in [%.3f, %.3f]", tc.name, m.Headroom, tc.lo, tc.hi)
		}
	}
}

// TestAtFromFollowsTheCurrentDeviation: a load running 20% above its usual level is forecast
// above the usual, and the deviation fades with the horizon as the remainder's autocorrelation says.
func TestAtFromFollowsTheCurrentDeviation(t *testing.T) {
	sh := shape{level: 1000, daily: 400}
	r := rand.New(rand.NewPCG(9, 10))
	slow := 0.0
	s := series(10*day, func(t time.Time) float64 {
		slow = 0.95*slow + 0.3*r.NormFloat64() // correlated noise: deviations last
		return sh.at(t) * (1 + 0.03*slow)
	})
	m, err := Fit(s, SeasonalProfile)
	if err != nil {
		t.Fatal(err)
	}
	if m.Persistence < 0.5 {
		t.Fatalf("persistence %.2f of a correlated remainder, want >= 0.5", m.Persistence)
	}
	now := m.End
	usual, _ := m.At(now.Add(10 * time.Minute))
	current := 1.2 * sh.at(now)
	near, _ := m.AtFrom(now.Add(time.Minute), now, current)
	far, _ := m.AtFrom(now.Add(5*time.Hour), now, current)
	nearUsual, _ := m.At(now.Add(time.Minute))
	farUsual, _ := m.At(now.Add(5 * time.Hour))
	if !(near > nearUsual*1.1) {
		t.Errorf("a minute ahead: anchored %.0f, usual %.0f; want the 20%% deviation to carry", near, nearUsual)
	}
	if math.Abs(far-farUsual) > 0.01*farUsual {
		t.Errorf("five hours ahead: anchored %.0f, usual %.0f; want the deviation faded", far, farUsual)
	}
	if v, _ := m.AtFrom(now.Add(10*time.Minute), now, math.NaN()); v != usual {
		t.Errorf("a NaN current value anchors nothing: %.0f, want %.0f", v, usual)
	}
}
