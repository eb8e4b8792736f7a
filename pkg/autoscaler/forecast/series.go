package forecast

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Reasons a forecast is off; each is the reason of the PredictionActive condition.
const (
	// ReasonHistoryTooShort means the history covers less than MinHistory.
	ReasonHistoryTooShort = "HistoryTooShort"
	// ReasonHistoryGappy means too much of the history, or of its last hour, is missing.
	ReasonHistoryGappy = "HistoryGappy"
	// ReasonNotSeasonal means the history has no daily pattern to forecast from.
	ReasonNotSeasonal = "NotSeasonal"
	// ReasonInvalidHistory means the history's step or values cannot be fitted.
	ReasonInvalidHistory = "InvalidHistory"
)

// Sentinel errors of Fit; Reason maps them to the condition reasons.
var (
	// ErrHistoryTooShort means the history covers less than MinHistory.
	ErrHistoryTooShort = errors.New("history too short")
	// ErrHistoryGappy means too much of the history, or of its last hour, is missing.
	ErrHistoryGappy = errors.New("history too gappy")
	// ErrNotSeasonal means the history has no daily pattern to forecast from.
	ErrNotSeasonal = errors.New("history not seasonal")
	// ErrInvalidHistory means the step does not divide a day, a value is negative or above
	// MaxValue, or the fit made a non-finite result of it.
	ErrInvalidHistory = errors.New("invalid history")
	// ErrBeyondHorizon means a forecast was asked for a time before the history's end or more
	// than MaxHorizon after it.
	ErrBeyondHorizon = errors.New("time outside the forecast horizon")
)

// Reason returns the condition reason for an error of Fit or Model.Earns, or "" for other errors.
func Reason(err error) string {
	switch {
	case errors.Is(err, ErrHistoryTooShort):
		return ReasonHistoryTooShort
	case errors.Is(err, ErrHistoryGappy):
		return ReasonHistoryGappy
	case errors.Is(err, ErrNotSeasonal):
		return ReasonNotSeasonal
	case errors.Is(err, ErrInvalidHistory):
		return ReasonInvalidHistory
	case errors.Is(err, ErrNoBetterThanPersistence):
		return ReasonNoBetterThanPersistence
	case errors.Is(err, ErrHeadroomTooHigh):
		return ReasonHeadroomTooHigh
	}
	return ""
}

const (
	day  = 24 * time.Hour
	week = 7 * day
	// MinHistory is the shortest history fitted: two days, for the daily pattern.
	MinHistory = 2 * day
	// MinWeeklyHistory is the shortest history whose weekly pattern is fitted: two weeks.
	MinWeeklyHistory = 2 * week
	// MaxGapFraction is the largest share of missing values in the history.
	MaxGapFraction = 0.2
	// RecentWindow is the window whose values set the current level; at least half of it must be there.
	RecentWindow = time.Hour
	// MinSeasonalStrength is the least share of the deseasonalized variance the daily (and
	// weekly) pattern must explain: 1 - var(remainder) / var(remainder + season).
	MinSeasonalStrength = 0.3
	// MaxHorizon is how far past the history's end a model forecasts.
	MaxHorizon = 6 * time.Hour
)

// MaxValue is the largest load fitted, in the metric's units (1e15: a petabyte of memory, a
// million cores, a quadrillion requests): a history with a value above it is invalid. Its
// squares, and their sums over the longest history, stay far below the largest float64, where
// a value such as math.MaxFloat64 (which exporters use for "unlimited") would make every
// squared error +Inf.
const MaxValue = 1e15

// Series is a regular history of one load: Values[i] is the load at Start + i×Step (a mean over
// the step, or a sample). NaN marks a missing value. Times are placed in days and weeks by their
// Unix time, so Step must divide a day.
type Series struct {
	// Start is the time of Values[0].
	Start time.Time
	// Step is the time between two values.
	Step time.Duration
	// Values are the loads, NaN where missing.
	Values []float64
}

// End is the time just after the last value: Start + len(Values)×Step.
func (s Series) End() time.Time {
	return s.Start.Add(time.Duration(len(s.Values)) * s.Step)
}

// slot returns the index of t's step within a period of n steps, by Unix time.
func (s Series) slot(t time.Time, n int) int {
	i := floorDiv(t.UnixNano(), int64(s.Step))
	return int(floorMod(i, int64(n)))
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	return a - floorDiv(a, b)*b
}

// check refuses a history that cannot be fitted, and trims it to start at its first value.
func check(s Series) (Series, error) {
	if s.Step <= 0 || day%s.Step != 0 {
		return s, fmt.Errorf("step %s does not divide a day: %w", s.Step, ErrInvalidHistory)
	}
	first := -1
	missing := 0
	for i, v := range s.Values {
		switch {
		case math.IsNaN(v):
			missing++
			continue
		case v < 0 || v > MaxValue:
			return s, fmt.Errorf("value %g at %s outside [0, %g]: %w", v, s.Start.Add(time.Duration(i)*s.Step).UTC().Format(time.RFC3339), MaxValue, ErrInvalidHistory)
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		return s, fmt.Errorf("no value in the %s of history read, %s needed: %w", time.Duration(len(s.Values))*s.Step, MinHistory, ErrHistoryTooShort)
	}
	missing -= first
	s = Series{Start: s.Start.Add(time.Duration(first) * s.Step), Step: s.Step, Values: s.Values[first:]}
	span := time.Duration(len(s.Values)) * s.Step
	if span < MinHistory {
		return s, fmt.Errorf("%s of history, %s needed: %w", span, MinHistory, ErrHistoryTooShort)
	}
	if f := float64(missing) / float64(len(s.Values)); f > MaxGapFraction {
		return s, fmt.Errorf("%.0f%% of the history missing, at most %.0f%%: %w", 100*f, 100*MaxGapFraction, ErrHistoryGappy)
	}
	recent := int(RecentWindow / s.Step)
	have := 0
	for _, v := range s.Values[len(s.Values)-recent:] {
		if !math.IsNaN(v) {
			have++
		}
	}
	if 2*have < recent {
		return s, fmt.Errorf("%d of the last %d values (%s) missing: %w", recent-have, recent, RecentWindow, ErrHistoryGappy)
	}
	return s, nil
}
