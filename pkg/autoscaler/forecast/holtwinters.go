package forecast

import (
	"fmt"
	"math"
	"time"
)

// hwParams are the smoothing factors of the level, the trend, the daily and the weekly season.
type hwParams struct{ alpha, beta, gammaDay, gammaWeek float64 }

// hwState is the smoothed state after some values.
type hwState struct {
	level, trend  float64
	daily, weekly []float64
}

// hwGrid returns the factors tried; the fit keeps those with the least one-step squared error.
func hwGrid() (alpha, beta, gamma []float64) {
	return []float64{0.02, 0.05, 0.1, 0.2, 0.4}, []float64{0, 0.001}, []float64{0.02, 0.1, 0.25}
}

// setHoltWinters runs additive double-seasonal Holt-Winters over the history from the robust
// decomposition's initial state, for every factor of the grid, and sets m to forecast from the
// state of the factors with the least one-step squared error. Factors whose error or state is not
// finite are not chosen; when no factors are left, the history is invalid.
func (m *Model) setHoltWinters(d decomposition) error {
	best, bestErr, found, bestP := hwState{}, math.Inf(1), false, hwParams{}
	alphas, betas, gammas := hwGrid()
	gammaWeek := []float64{0}
	if d.weekly != nil {
		gammaWeek = gammas
	}
	for _, a := range alphas {
		for _, b := range betas {
			for _, gd := range gammas {
				for _, gw := range gammaWeek {
					p := hwParams{a, b, gd, gw}
					st, sse := d.runHoltWinters(p, nil)
					if finite(sse) && st.finite() && (!found || sse < bestErr) {
						best, bestErr, found, bestP = st, sse, true, p
					}
				}
			}
		}
	}
	if !found {
		return fmt.Errorf("no smoothing factors give a finite error: %w", ErrInvalidHistory)
	}
	// The state is the level at the last value.
	m.base, m.slope, m.slopeUnit, m.origin = best.level, best.trend, d.s.Step, d.s.End().Add(-d.s.Step)
	m.daily, m.weekly = best.daily, best.weekly
	m.scoreHoltWinters(d, bestP)
	return nil
}

// finite tells whether every number of the state is finite and its daily profile is there.
func (st hwState) finite() bool {
	if !finite(st.level) || !finite(st.trend) || len(st.daily) == 0 {
		return false
	}
	for _, p := range [][]float64{st.daily, st.weekly} {
		for _, v := range p {
			if !finite(v) {
				return false
			}
		}
	}
	return true
}

// runHoltWinters smooths the whole history with p and returns the final state and the sum of the
// squared one-step errors after the first day (the warm-up). Each error is clipped to the outlier
// bound before it updates the state or counts (robust Holt-Winters): a spike moves the level and
// its slot of the profiles no more than a value at the bound would. A missing value advances the
// level by the trend and leaves the seasons as they are. observe, when set, sees the state after each value.
func (d decomposition) runHoltWinters(p hwParams, observe func(i int, st hwState)) (hwState, float64) {
	st := hwState{level: d.level[0], daily: append([]float64(nil), d.daily...)}
	if d.weekly != nil {
		st.weekly = append([]float64(nil), d.weekly...)
	}
	var sse float64
	for i, x := range d.s.Values {
		ds, ws := d.daySlot[i], d.weekSlot[i]
		var w float64
		if st.weekly != nil {
			w = st.weekly[ws]
		}
		if math.IsNaN(x) {
			st.level += st.trend
			if observe != nil {
				observe(i, st)
			}
			continue
		}
		pred := st.level + st.trend + st.daily[ds] + w
		e := d.clip(x - pred) // an outlier updates the state as one at the bound would
		x = pred + e
		if i >= d.perDay {
			sse += e * e
		}
		level := p.alpha*(x-st.daily[ds]-w) + (1-p.alpha)*(st.level+st.trend)
		st.trend = p.beta*(level-st.level) + (1-p.beta)*st.trend
		st.level = level
		st.daily[ds] = p.gammaDay*(x-level-w) + (1-p.gammaDay)*st.daily[ds]
		if st.weekly != nil {
			st.weekly[ws] = p.gammaWeek*(x-level-st.daily[ds]) + (1-p.gammaWeek)*w
		}
		if observe != nil {
			observe(i, st)
		}
	}
	return st, sse
}

// interpolate reads a profile of len(p) steps at t, between the slots around it; NaN for an
// empty profile (or a zero step), which At then refuses.
func interpolate(s Series, p []float64, t time.Time) float64 {
	n := len(p)
	if n == 0 || s.Step <= 0 {
		return math.NaN()
	}
	pos := float64(floorMod(t.UnixNano(), int64(n)*int64(s.Step))) / float64(s.Step)
	i := int(pos)
	f := pos - float64(i)
	return (1-f)*p[i%n] + f*p[(i+1)%n]
}
