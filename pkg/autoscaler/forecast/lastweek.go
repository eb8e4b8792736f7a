package forecast

import (
	"math"
	"slices"
)

// BrokenDayFactor is how many times the typical day's median absolute relative error a day's
// must exceed to count as a day that broke the pattern (a holiday, an outage, a one-off event):
// the headroom and the persistence leave it out.
const BrokenDayFactor = 2

// lastWeek is the last week of a history split into the days of its clock (midnight to midnight,
// as the daily profile's slots; the first and the last may be partial), with the days that broke
// the pattern: what the headroom and the persistence are measured on. A holiday is a day of the
// calendar: days counted back from the history's end would split it between two days, each half
// too ordinary to be left out.
type lastWeek struct {
	// from is the index of the week's first value; shift its slot in its day: value i is in day
	// (i − from + shift) / perDay.
	from, shift, perDay int
	// byDay holds each day's relative errors of the in-sample forecast at its busy steps (see headroom).
	byDay [][]float64
	// broken holds the days that broke the pattern (see brokenDays); none without the weekly
	// pattern, where a weekend would look like a broken day.
	broken map[int]bool
}

// lastWeek returns the history's last week: the relative error, at each busy step, of the
// forecast a lead ahead, approximated in sample (the mean deseasonalized value of the preceding
// RecentWindow plus the season, against the value), grouped by day, and the days that broke the
// pattern. Only the busy part of the days counts (a forecast of at least a quarter of the week's
// 95th percentile): near zero, relative errors are large and capacity is not at stake.
func (d decomposition) lastWeek() lastWeek {
	w := int(RecentWindow / d.s.Step)
	n := len(d.s.Values)
	from := max(w, n-int(week/d.s.Step))
	if from >= n {
		return lastWeek{from: from, perDay: d.perDay}
	}
	shift := d.daySlot[from]
	lw := lastWeek{from: from, shift: shift, perDay: d.perDay, byDay: make([][]float64, (n-from+shift+d.perDay-1)/d.perDay)}
	busy := quantile(finiteValues(d.s.Values[from:]), 0.95) / 4
	sum, cnt := 0.0, 0
	for i := from - w; i < from; i++ {
		if v := d.s.Values[i]; !math.IsNaN(v) {
			sum, cnt = sum+v-d.season(i), cnt+1
		}
	}
	for i := from; i < n; i++ {
		v := d.s.Values[i]
		if cnt > 0 && !math.IsNaN(v) {
			if pred := sum/float64(cnt) + d.season(i); pred > 0 && pred >= busy {
				k := lw.day(i)
				lw.byDay[k] = append(lw.byDay[k], (v-pred)/pred)
			}
		}
		if v := d.s.Values[i-w]; !math.IsNaN(v) {
			sum, cnt = sum-(v-d.season(i-w)), cnt-1
		}
		if !math.IsNaN(v) {
			sum, cnt = sum+v-d.season(i), cnt+1
		}
	}
	if d.weekly != nil {
		lw.broken = brokenDays(lw.byDay)
	}
	return lw
}

// day is the day of value i, at or after from.
func (lw lastWeek) day(i int) int { return (i - lw.from + lw.shift) / lw.perDay }

// isBroken tells whether value i lies in a day of the week that broke the pattern.
func (lw lastWeek) isBroken(i int) bool {
	return i >= lw.from && lw.broken[lw.day(i)]
}

// levelBroken tells whether the level of value i, the mean over the day centred on it (see
// levels), reaches into a day that broke the pattern: the remainder there is measured against a
// level the broken day pulled. The window is a value longer than a day, so it reaches into a
// day when one of its ends does.
func (lw lastWeek) levelBroken(i int) bool {
	half := lw.perDay / 2
	return lw.isBroken(i-half) || lw.isBroken(i) || lw.isBroken(i+half)
}

// headroom is the q-quantile of the relative errors of the last week's ordinary days: with the
// weekly pattern fitted, days that broke it are left out, so that the week after a holiday is
// provisioned as an ordinary week. 0 when the errors are mostly below zero.
func (d decomposition) headroom(q float64, lw lastWeek) float64 {
	var errs []float64
	for k, e := range lw.byDay {
		if !lw.broken[k] {
			errs = append(errs, e...)
		}
	}
	return math.Max(0, quantile(errs, q))
}

// brokenDays returns the days whose median absolute error is above BrokenDayFactor times the
// median of the days' (at most half of the days, the worst first).
func brokenDays(byDay [][]float64) map[int]bool {
	type dayErr struct {
		k   int
		mad float64
	}
	var days []dayErr
	for k, e := range byDay {
		if len(e) > 0 {
			abs := make([]float64, len(e))
			for i, v := range e {
				abs[i] = math.Abs(v)
			}
			days = append(days, dayErr{k, median(abs)})
		}
	}
	mads := make([]float64, len(days))
	for i, de := range days {
		mads[i] = de.mad
	}
	typical := median(mads)
	slices.SortFunc(days, func(a, b dayErr) int { return cmpFloat(b.mad, a.mad) })
	broken := map[int]bool{}
	for _, de := range days[:len(days)/2] {
		if de.mad > BrokenDayFactor*typical {
			broken[de.k] = true
		}
	}
	return broken
}

// cmpFloat orders a and b.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// persistence is the lag-one autocorrelation of the remainder over the last week's ordinary
// days, clamped to [0, 1): how much of a deviation from the season one step carries into the
// next. The days that broke the pattern are left out as in the headroom: a holiday's remainder
// is a deviation that lasts all day, whose correlation near 1 would otherwise make the forecast
// follow every minute's noise of the load now for the week after.
func (d decomposition) persistence(lw lastWeek) float64 {
	n := len(d.s.Values)
	var a, b []float64
	for i := max(1, n-int(week/d.s.Step)); i < n; i++ {
		x0, x1 := d.s.Values[i-1], d.s.Values[i]
		if math.IsNaN(x0) || math.IsNaN(x1) || lw.levelBroken(i-1) || lw.levelBroken(i) {
			continue
		}
		a = append(a, x0-d.level[i-1]-d.season(i-1))
		b = append(b, x1-d.level[i]-d.season(i))
	}
	c := correlation(a, b)
	if math.IsNaN(c) {
		return 0
	}
	return math.Min(0.999, math.Max(0, c))
}
