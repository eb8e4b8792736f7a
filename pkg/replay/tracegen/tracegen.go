package tracegen

import (
	"math"
	"math/rand/v2"
	"time"
)

// Trace is a generated load: Load[i] is the load at Start + i×Step.
type Trace struct {
	// Name names the trace.
	Name string
	// Start is the time of Load[0].
	Start time.Time
	// Step is the time between two values.
	Step time.Duration
	// Load is the load, e.g. queries per second summed over the workload's pods.
	Load []float64
}

// At returns the load at t, linearly interpolated; NaN outside the trace.
func (tr Trace) At(t time.Time) float64 {
	pos := float64(t.Sub(tr.Start)) / float64(tr.Step)
	i := int(math.Floor(pos))
	if i < 0 || i >= len(tr.Load) {
		return math.NaN()
	}
	if i == len(tr.Load)-1 {
		return tr.Load[i]
	}
	f := pos - float64(i)
	return (1-f)*tr.Load[i] + f*tr.Load[i+1]
}

// Spec describes a trace.
type Spec struct {
	// Name names the trace.
	Name string
	// Start is the first time; Span how long the trace runs; Step the time between values.
	Start time.Time
	// Span is the length of the trace.
	Span time.Duration
	// Step is the time between two values.
	Step time.Duration
	// Seed makes the noise reproducible.
	Seed uint64
	// Peak is the weekday peak load.
	Peak float64
	// Weekend is the weekend's peak as a fraction of Peak.
	Weekend float64
	// GrowthPerWeek is the relative growth of the load per week (the trend), e.g. 0.02.
	GrowthPerWeek float64
	// Noise is the standard deviation of the relative noise: half of it white, half of it
	// slow (correlated over about five minutes).
	Noise float64
	// Flat is the share of the peak that does not follow the daily pattern: the noiseless load
	// is the peak × (Flat + (1 − Flat) × the pattern). 0 keeps the whole pattern.
	Flat float64
	// Holidays are dates (any time within the day, UTC) that run the weekend's pattern.
	Holidays []time.Time
	// Spikes are unforecastable bursts.
	Spikes []Spike
	// Outliers are single wrong minutes (a scrape of a bad exporter, a counter glitch).
	Outliers []Outlier
}

// Outlier sets the load of the minute from At to Factor × the peak, whatever the load around it.
type Outlier struct {
	// At is when the outlier's minute starts.
	At time.Time
	// Factor is the load in that minute, in peaks.
	Factor float64
}

// Spike multiplies the load by Factor for Duration from At, ramping up in a minute.
type Spike struct {
	// At is when the spike starts.
	At time.Time
	// Duration is how long it lasts.
	Duration time.Duration
	// Factor multiplies the load.
	Factor float64
}

// knot is one point of a day's piecewise-linear shape: minute of the day and level (1 = peak).
type knot struct {
	minute float64
	level  float64
}

// weekday is a working day: a night low, a slow rise from six, a ramp at 08:00 to 90% in three
// minutes, a lunch dip at 12:00 with a five-minute ramp back at 13:00, an evening bump.
func weekday() []knot {
	return []knot{
		{0, 0.15}, {360, 0.15}, {420, 0.35}, {480, 0.35}, {483, 0.9}, {720, 1.0}, {722, 0.75}, {780, 0.75},
		{785, 1.0}, {1020, 0.85}, {1140, 0.5}, {1200, 0.6}, {1260, 0.45}, {1440, 0.15},
	}
}

// weekend starts late, with a ramp at 10:00, and is relative to the weekend's own peak.
func weekend() []knot {
	return []knot{{0, 0.3}, {540, 0.3}, {600, 0.4}, {603, 0.85}, {900, 1.0}, {1200, 0.8}, {1320, 0.5}, {1440, 0.3}}
}

func shape(knots []knot, minute float64) float64 {
	for i := 1; i < len(knots); i++ {
		if minute <= knots[i].minute {
			a, b := knots[i-1], knots[i]
			return a.level + (b.level-a.level)*(minute-a.minute)/(b.minute-a.minute)
		}
	}
	return knots[len(knots)-1].level
}

// Generate returns the trace spec describes.
func Generate(s Spec) Trace {
	n := int(s.Span / s.Step)
	tr := Trace{Name: s.Name, Start: s.Start, Step: s.Step, Load: make([]float64, n)}
	r := rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
	// The slow noise is an AR(1) process whose correlation decays over about five minutes.
	phi := math.Exp(-float64(s.Step) / float64(5*time.Minute))
	slow := 0.0
	for i := range tr.Load {
		t := s.Start.Add(time.Duration(i) * s.Step)
		slow = phi*slow + math.Sqrt(1-phi*phi)*r.NormFloat64()
		noise := 1 + s.Noise/math.Sqrt2*(slow+r.NormFloat64())
		tr.Load[i] = math.Max(0, s.base(t)*noise*s.spike(t))
		if f, ok := s.outlier(t); ok {
			tr.Load[i] = f * s.Peak
		}
	}
	return tr
}

// outlier is the factor of the outlier whose minute holds t, if one does.
func (s Spec) outlier(t time.Time) (float64, bool) {
	for _, o := range s.Outliers {
		if d := t.Sub(o.At); d >= 0 && d < time.Minute {
			return o.Factor, true
		}
	}
	return 0, false
}

// base is the noiseless load at t.
func (s Spec) base(t time.Time) float64 {
	t = t.UTC()
	minute := float64(t.Hour()*60+t.Minute()) + float64(t.Second())/60
	growth := 1 + s.GrowthPerWeek*float64(t.Sub(s.Start))/float64(7*24*time.Hour)
	if t.Weekday() == time.Saturday || t.Weekday() == time.Sunday || s.holiday(t) {
		return s.Peak * s.Weekend * s.flatten(shape(weekend(), minute)) * growth
	}
	return s.Peak * s.flatten(shape(weekday(), minute)) * growth
}

func (s Spec) holiday(t time.Time) bool {
	y, m, d := t.Date()
	for _, h := range s.Holidays {
		hy, hm, hd := h.UTC().Date()
		if y == hy && m == hm && d == hd {
			return true
		}
	}
	return false
}

// spike is the spikes' factor at t.
func (s Spec) spike(t time.Time) float64 {
	f := 1.0
	for _, sp := range s.Spikes {
		d := t.Sub(sp.At)
		if d < 0 || d >= sp.Duration {
			continue
		}
		ramp := math.Min(1, float64(d)/float64(time.Minute))
		f *= 1 + (sp.Factor-1)*ramp
	}
	return f
}

// flatten keeps 1 − Flat of the pattern's level and makes the rest flat at the peak.
func (s Spec) flatten(level float64) float64 {
	return s.Flat + (1-s.Flat)*level
}
