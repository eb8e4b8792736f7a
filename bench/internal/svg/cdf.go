package svg

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Sample is one named set of values, e.g. the latencies of one target.
type Sample struct {
	Name   string
	Values []float64
}

// CDF is a chart of the cumulative distribution of each sample: the share
// of values at or below x.
type CDF struct {
	Title, Subtitle, XLabel string
	// LogX puts x on a log10 scale (values ≤ 0 are left out).
	LogX    bool
	Samples []Sample
}

// Render returns the chart as an SVG document. Empty samples are named in
// the legend and draw nothing.
func (c CDF) Render() string {
	var cv canvas
	cv.begin(c.Title, c.Subtitle)
	lo, hi := c.bounds()
	xOf := func(v float64) float64 {
		if c.LogX {
			return plotL + (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*(plotR-plotL)
		}
		return plotL + (v-lo)/(hi-lo)*(plotR-plotL)
	}
	yOf := func(q float64) float64 { return plotB - q*(plotB-plotT) }
	for q := 0.0; q <= 1.0001; q += 0.25 {
		cv.yTick(yOf(q), fmt.Sprintf("%.0f%%", q*100))
	}
	for _, t := range c.ticks(lo, hi) {
		cv.xTick(xOf(t), formatTick(t))
	}
	cv.frame(c.XLabel, "share of values ≤ x")
	names := make([]string, len(c.Samples))
	for i, s := range c.Samples {
		names[i] = fmt.Sprintf("%s (n=%d)", s.Name, len(s.Values))
		vals := c.usable(s.Values)
		if len(vals) == 0 {
			continue
		}
		pts := []string{fmt.Sprintf("M%.1f %.1f", xOf(vals[0]), yOf(0))}
		for j, v := range vals {
			pts = append(pts, fmt.Sprintf("H%.1f V%.1f", xOf(v), yOf(float64(j+1)/float64(len(vals)))))
		}
		cv.printf(`<path d="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), color(i))
	}
	cv.legend(names)
	return cv.end()
}

// usable returns the sorted values the scale can place.
func (c CDF) usable(values []float64) []float64 {
	var out []float64
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) || (c.LogX && v <= 0) {
			continue
		}
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// bounds returns the x range covering every sample.
func (c CDF) bounds() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range c.Samples {
		for _, v := range c.usable(s.Values) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) { // nothing to draw
		lo, hi = 0, 1
		if c.LogX {
			lo = 0.1
		}
	}
	if c.LogX {
		lo = math.Pow(10, math.Floor(math.Log10(lo)))
		hi = math.Pow(10, math.Ceil(math.Log10(hi)))
		if hi <= lo {
			hi = lo * 10
		}
		return lo, hi
	}
	step := niceStep(hi-math.Min(lo, 0), 8)
	lo = math.Min(0, math.Floor(lo/step)*step)
	hi = math.Ceil(hi/step) * step
	if hi <= lo {
		hi = lo + step
	}
	return lo, hi
}

func (c CDF) ticks(lo, hi float64) []float64 {
	var out []float64
	if c.LogX {
		for t := lo; t <= hi*1.0001; t *= 10 {
			out = append(out, t)
		}
		return out
	}
	step := niceStep(hi-lo, 8)
	for t := lo; t <= hi+step/1000; t += step {
		out = append(out, math.Round(t/step)*step)
	}
	return out
}
