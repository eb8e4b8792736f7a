package forecast

import (
	"math"
	"slices"
	"time"
)

// decomposition splits a history into a level per day, a daily profile, a weekly adjustment and
// the remainder, with medians throughout so that a holiday or a spike in the history barely moves it.
type decomposition struct {
	s Series
	// perDay and perWeek are the steps in a day and a week.
	perDay, perWeek int
	// daySlot and weekSlot are each value's slot in its day and its week.
	daySlot, weekSlot []int
	// level holds each value's level: the mean of the deseasonalized values over the day around it.
	level []float64
	// daily is the profile over a day, indexed by daily slot; weekly the adjustment over a week,
	// indexed by weekly slot (nil when the history is shorter than MinWeeklyHistory).
	daily, weekly []float64
	// bound is how far a value may stray from its level and season before it counts as an
	// outlier: OutlierMADs robust standard deviations (1.4826 × MAD) of the remainder, at least
	// MinOutlierShare of the median value; 0 when neither varies. Outliers are clipped to it in
	// the strength and in Holt-Winters.
	bound float64
	// strength is 1 - var(remainder) / var(values - level), outliers clipped to bound.
	strength float64
}

// OutlierMADs is how many robust standard deviations (1.4826 × the median absolute deviation) of
// the decomposition's remainder a value may stray from its level and season before it counts as
// an outlier: its excess is clipped, so that one spike (a minute at 100× the peak) neither turns
// the forecast off as not seasonal nor lifts the profile at its time of day for weeks.
const OutlierMADs = 5

// MinOutlierShare is the least outlier bound, as a share of the history's median: a smooth load
// whose remainder hardly varies still moves its forecast by what its profile misses.
const MinOutlierShare = 0.05

// decompose fits the daily profile, and the weekly adjustment when the history is long enough.
// smooth is the width, in steps, of the moving average applied to the profile.
func decompose(s Series, smooth int) decomposition {
	d := decomposition{s: s, perDay: int(day / s.Step), perWeek: int(week / s.Step)}
	d.daySlot, d.weekSlot = make([]int, len(s.Values)), make([]int, len(s.Values))
	w0 := s.slot(s.Start, d.perWeek)
	for i := range s.Values {
		d.weekSlot[i] = (w0 + i) % d.perWeek
		d.daySlot[i] = d.weekSlot[i] % d.perDay
	}
	d.level = levels(s, d.perDay, nil)
	d.daily = d.profile(d.perDay, smooth, nil)
	d.level = levels(s, d.perDay, d.season)
	d.daily = d.profile(d.perDay, smooth, nil)
	if time.Duration(len(s.Values))*s.Step >= MinWeeklyHistory {
		d.weekly = d.profile(d.perWeek, smooth, d.daily)
	}
	d.bound = math.Max(OutlierMADs*d.robustSpread(), MinOutlierShare*median(finiteValues(s.Values)))
	d.strength = d.seasonalStrength()
	return d
}

// robustSpread is 1.4826 × the median absolute deviation of the remainder: its standard
// deviation were it normal, whatever its outliers.
func (d decomposition) robustSpread() float64 {
	var rem []float64
	for i, v := range d.s.Values {
		if !math.IsNaN(v) {
			rem = append(rem, v-d.level[i]-d.season(i))
		}
	}
	m := median(rem)
	for i, r := range rem {
		rem[i] = math.Abs(r - m)
	}
	if mad := median(rem); mad > 0 {
		return 1.4826 * mad
	}
	return 0
}

// clip bounds the deviation e of a value from its expectation to ±d.bound (unbounded when 0).
func (d decomposition) clip(e float64) float64 {
	if d.bound <= 0 {
		return e
	}
	return math.Max(-d.bound, math.Min(d.bound, e))
}

// season is the daily profile plus the weekly adjustment at value i.
func (d decomposition) season(i int) float64 {
	v := d.daily[d.daySlot[i]]
	if d.weekly != nil {
		v += d.weekly[d.weekSlot[i]]
	}
	return v
}

// profile returns, per slot of a period of n steps, the median over the cycles of the values less
// their level (and less base, a shorter profile, when set), smoothed over width slots.
func (d decomposition) profile(n, width int, base []float64) []float64 {
	slots := d.daySlot
	if n == d.perWeek {
		slots = d.weekSlot
	}
	buckets := make([][]float64, n)
	for i, v := range d.s.Values {
		if math.IsNaN(v) {
			continue
		}
		r := v - d.level[i]
		if base != nil {
			r -= base[d.daySlot[i]]
		}
		buckets[slots[i]] = append(buckets[slots[i]], r)
	}
	p := make([]float64, n)
	for k, b := range buckets {
		p[k] = median(b)
	}
	fillCircular(p)
	return smoothCircular(p, width)
}

// seasonalStrength is 1 - var(remainder) / var(values - level), each value's remainder clipped
// to the outlier bound; 0 when nothing varies.
func (d decomposition) seasonalStrength() float64 {
	var rem, detr []float64
	for i, v := range d.s.Values {
		if math.IsNaN(v) {
			continue
		}
		r := d.clip(v - d.level[i] - d.season(i))
		detr = append(detr, r+d.season(i))
		rem = append(rem, r)
	}
	vd := variance(detr)
	if vd <= 1e-12*math.Max(1, meanAbs(d.s.Values)) {
		return 0
	}
	return math.Max(0, 1-variance(rem)/vd)
}

// recentLevel is the median of the deseasonalized values over the last RecentWindow.
func (d decomposition) recentLevel() float64 {
	n := int(RecentWindow / d.s.Step)
	var r []float64
	for i := max(0, len(d.s.Values)-n); i < len(d.s.Values); i++ {
		if v := d.s.Values[i]; !math.IsNaN(v) {
			r = append(r, v-d.season(i))
		}
	}
	return median(r)
}

func correlation(a, b []float64) float64 {
	if len(a) < 3 {
		return math.NaN()
	}
	var ma, mb float64
	for i := range a {
		ma, mb = ma+a[i], mb+b[i]
	}
	ma, mb = ma/float64(len(a)), mb/float64(len(b))
	var sab, saa, sbb float64
	for i := range a {
		sab += (a[i] - ma) * (b[i] - mb)
		saa += (a[i] - ma) * (a[i] - ma)
		sbb += (b[i] - mb) * (b[i] - mb)
	}
	if saa == 0 || sbb == 0 {
		return math.NaN()
	}
	return sab / math.Sqrt(saa*sbb)
}

func finiteValues(v []float64) []float64 {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if !math.IsNaN(x) {
			out = append(out, x)
		}
	}
	return out
}

// quantile is the q-quantile of v (nearest rank); NaN when v is empty.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	c := slices.Clone(v)
	slices.Sort(c)
	return c[min(len(c)-1, int(q*float64(len(c))))]
}

// trendPerDay is the Theil–Sen slope of the daily levels over the last two weeks, per day; 0 with
// fewer than three days.
func (d decomposition) trendPerDay() float64 {
	var days []float64
	for i := len(d.level) - 1; i >= 0 && len(days) < 14; i -= d.perDay {
		days = append(days, d.level[i])
	}
	if len(days) < 3 {
		return 0
	}
	var slopes []float64
	for i := range days {
		for j := i + 1; j < len(days); j++ {
			slopes = append(slopes, (days[i]-days[j])/float64(j-i)) // days is newest first
		}
	}
	return median(slopes)
}

// levels returns each value's level: the mean of the values less season (the raw values when
// season is nil) over the day centred on it. Near the ends, where a day does not fit, the raw
// values take the level of the nearest full day (the daily pattern would bias a shorter window);
// deseasonalized values take the mean over what there is.
func levels(s Series, perDay int, season func(int) float64) []float64 {
	n := len(s.Values)
	sum, cnt := make([]float64, n+1), make([]int, n+1)
	for i, v := range s.Values {
		sum[i+1], cnt[i+1] = sum[i], cnt[i]
		if math.IsNaN(v) {
			continue
		}
		if season != nil {
			v -= season(i)
		}
		sum[i+1] += v
		cnt[i+1]++
	}
	half := perDay / 2
	out := make([]float64, n)
	for i := range out {
		c := i
		if season == nil {
			c = min(max(i, half), n-1-half)
		}
		lo, hi := max(0, c-half), min(n, c+half+1)
		out[i] = math.NaN()
		if k := cnt[hi] - cnt[lo]; k > 0 {
			out[i] = (sum[hi] - sum[lo]) / float64(k)
		}
	}
	fillNearest(out)
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	c := slices.Clone(v)
	slices.Sort(c)
	m := len(c) / 2
	if len(c)%2 == 1 {
		return c[m]
	}
	return (c[m-1] + c[m]) / 2
}

func variance(v []float64) float64 {
	if len(v) < 2 {
		return 0
	}
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	return sq / float64(len(v)-1)
}

func meanAbs(v []float64) float64 {
	var sum float64
	var n int
	for _, x := range v {
		if !math.IsNaN(x) {
			sum += math.Abs(x)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// fillNearest replaces NaNs by the nearest value, preferring the earlier one; all NaN stays NaN.
func fillNearest(v []float64) {
	last := math.NaN()
	for i := range v {
		if math.IsNaN(v[i]) {
			v[i] = last
		} else {
			last = v[i]
		}
	}
	last = math.NaN()
	for i := len(v) - 1; i >= 0; i-- {
		if math.IsNaN(v[i]) {
			v[i] = last
		} else {
			last = v[i]
		}
	}
}

// fillCircular replaces NaN slots of a profile by the mean of the nearest valid slots around
// them, and an all-NaN profile by zeros.
func fillCircular(p []float64) {
	n := len(p)
	for k := range p {
		if !math.IsNaN(p[k]) {
			continue
		}
		var sum float64
		var cnt int
		for off := 1; off < n && cnt == 0; off++ {
			for _, j := range []int{(k - off + n) % n, (k + off) % n} {
				if !math.IsNaN(p[j]) {
					sum += p[j]
					cnt++
				}
			}
		}
		p[k] = 0
		if cnt > 0 {
			p[k] = sum / float64(cnt)
		}
	}
}

// smoothCircular is the centred moving average of p over width slots, wrapping around.
func smoothCircular(p []float64, width int) []float64 {
	if width <= 1 {
		return p
	}
	n, half := len(p), width/2
	out := make([]float64, n)
	for k := range p {
		var sum float64
		for j := -half; j <= half; j++ {
			sum += p[((k+j)%n+n)%n]
		}
		out[k] = sum / float64(2*half+1)
	}
	return out
}
