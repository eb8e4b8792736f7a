package forecast

import (
	"math"
	"time"
)

// Accuracy accumulates forecasts against what happened, for the weighted absolute percentage
// error: WAPE = sum |forecast - actual| / sum |actual|.
type Accuracy struct {
	// AbsError is the sum of |forecast - actual|.
	AbsError float64
	// AbsActual is the sum of |actual|.
	AbsActual float64
	// N counts the pairs.
	N int
}

// Add records one forecast and the actual load at its time; NaN in either is skipped.
func (a *Accuracy) Add(forecast, actual float64) {
	if math.IsNaN(forecast) || math.IsNaN(actual) {
		return
	}
	a.AbsError += math.Abs(forecast - actual)
	a.AbsActual += math.Abs(actual)
	a.N++
}

// WAPE is the weighted absolute percentage error as a fraction; NaN without any actual load.
func (a Accuracy) WAPE() float64 {
	if a.AbsActual == 0 {
		return math.NaN()
	}
	return a.AbsError / a.AbsActual
}

// Backtest measures method on s as it would run: from evalFrom on, the model is refitted every
// refresh on the history before that time, and at every step forecasts lead ahead. It returns the
// accuracy at the lead horizon and how many refits were refused (history too short, gappy or not
// seasonal); their steps are not counted.
func Backtest(s Series, method Method, lead, refresh time.Duration, evalFrom time.Time) (Accuracy, int) {
	var acc Accuracy
	refused := 0
	per := max(1, int(refresh/s.Step))
	first := max(0, int(evalFrom.Sub(s.Start)/s.Step))
	for fit := first; fit < len(s.Values); fit += per {
		m, err := Fit(Series{Start: s.Start, Step: s.Step, Values: s.Values[:fit]}, method)
		if err != nil {
			refused++
			continue
		}
		for i := fit; i < min(fit+per, len(s.Values)); i++ {
			at := s.Start.Add(time.Duration(i)*s.Step + lead)
			j := int(at.Sub(s.Start) / s.Step)
			if j >= len(s.Values) || at.Sub(s.Start)%s.Step != 0 {
				continue
			}
			f, err := m.At(at)
			if err != nil {
				continue
			}
			acc.Add(f, s.Values[j])
		}
	}
	return acc, refused
}
