package svg

import (
	"fmt"
	"math"
	"strings"
)

// Series is one line of a Line chart: Y[i] belongs to the chart's X[i];
// NaN leaves a gap.
type Series struct {
	Name string
	Y    []float64
}

// Line is a chart of figures against a few x values (e.g. sizes N), placed
// evenly in order whatever their values, each point marked and labelled.
type Line struct {
	Title, Subtitle, XLabel, YLabel string
	X                               []float64
	Series                          []Series
}

// Render returns the chart as an SVG document.
func (l Line) Render() string {
	var cv canvas
	cv.begin(l.Title, l.Subtitle)
	hi := 0.0
	for _, s := range l.Series {
		for _, v := range s.Y {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				hi = math.Max(hi, v)
			}
		}
	}
	step := niceStep(hi, 6)
	top := math.Max(step, math.Ceil(hi*1.05/step)*step)
	yOf := func(v float64) float64 { return plotB - v/top*(plotB-plotT) }
	xOf := func(i int) float64 {
		if len(l.X) <= 1 {
			return (plotL + plotR) / 2
		}
		pad := (plotR - plotL) * 0.08
		return plotL + pad + float64(i)/float64(len(l.X)-1)*(plotR-plotL-2*pad)
	}
	for v := 0.0; v <= top+step/1000; v += step {
		cv.yTick(yOf(v), formatTick(v))
	}
	for i, x := range l.X {
		cv.xTick(xOf(i), formatTick(x))
	}
	cv.frame(l.XLabel, l.YLabel)
	names := make([]string, len(l.Series))
	for si, s := range l.Series {
		names[si] = s.Name
		var seg []string
		flush := func() {
			if len(seg) > 1 {
				cv.printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(seg, " "), color(si))
			}
			seg = nil
		}
		for i, v := range s.Y {
			if i >= len(l.X) || math.IsNaN(v) || math.IsInf(v, 0) {
				flush()
				continue
			}
			x, y := xOf(i), yOf(v)
			seg = append(seg, fmt.Sprintf("%.1f,%.1f", x, y))
			cv.printf(`<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>`+"\n", x, y, color(si))
			cv.printf(`<text x="%.1f" y="%.1f" font-size="11" fill="%s" text-anchor="middle">%s</text>`+"\n",
				x, y-8, color(si), formatTick(math.Round(v*10)/10))
		}
		flush()
	}
	cv.legend(names)
	return cv.end()
}
