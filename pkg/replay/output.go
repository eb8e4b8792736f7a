package replay

import (
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// WriteCSV writes steps as a table: time, actual and replayed replicas, ready pods, and per metric
// the load, the load per ready replayed pod and the target per pod.
func WriteCSV(w io.Writer, spec Spec, steps []Step, requests *Requests) error {
	cw := csv.NewWriter(w)
	header := []string{"time", "actual_replicas", "replayed_replicas", "ready_pods", "reason"}
	for _, m := range spec.Metrics {
		header = append(header, m.Name+"_load", m.Name+"_per_pod", m.Name+"_target_per_pod")
	}
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write table header: %w", err)
	}
	for _, st := range steps {
		row := []string{st.Time.UTC().Format(time.RFC3339), number(st.Actual), strconv.Itoa(int(st.Replicas)),
			strconv.Itoa(int(st.Ready)), st.Reason}
		for k, m := range spec.Metrics {
			row = append(row, number(st.Load[k]), number(st.PerPod[k]), number(TargetPerPod(m.Target, requests)))
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write table row: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// number formats v compactly; NaN is empty.
func number(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// actualColor draws the real curves.
const actualColor = "#bbb"

// Chart geometry, in SVG user units.
const (
	chartWidth  = 900
	panelHeight = 220
	marginLeft  = 60
	marginTop   = 40
	panelGap    = 50
)

// panel is one plot area with its value range.
type panel struct {
	top    float64
	lo, hi float64
	title  string
}

func (p panel) y(v float64) float64 {
	if p.hi <= p.lo {
		return p.top + panelHeight
	}
	return p.top + panelHeight - (v-p.lo)/(p.hi-p.lo)*panelHeight
}

// WriteSVG draws steps as two panels over time: actual and replayed replicas, then the first
// metric's load per pod (replayed and actual) against its target.
func WriteSVG(w io.Writer, spec Spec, steps []Step, requests *Requests) error {
	if len(steps) == 0 {
		return fmt.Errorf("chart %s: no steps", spec.Name)
	}
	var b strings.Builder
	height := marginTop + 2*panelHeight + panelGap + 40
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="20" font-size="14">%s: %s from %s to %s</text>`+"\n",
		marginLeft, html.EscapeString(spec.Name), html.EscapeString(spec.PodAutoscaler.Spec.ScaleTargetName),
		steps[0].Time.UTC().Format(time.RFC3339), steps[len(steps)-1].Time.UTC().Format(time.RFC3339))
	x := xScale(steps)
	reps := panel{top: marginTop, title: "replicas: actual (grey), replayed (blue)"}
	reps.hi = float64(spec.PodAutoscaler.Spec.MaxReplicas)
	for _, st := range steps {
		reps.hi = max(reps.hi, finite(st.Actual), float64(st.Replicas))
	}
	drawPanel(&b, reps, x, steps)
	line(&b, x, reps, steps, actualColor, func(st Step) float64 { return st.Actual })
	line(&b, x, reps, steps, "#1f5fbf", func(st Step) float64 { return float64(st.Replicas) })
	m := spec.Metrics[0]
	target := TargetPerPod(m.Target, requests)
	load := panel{top: marginTop + panelHeight + panelGap, title: m.Name + " per pod: actual (grey), replayed (blue), target (red)"}
	actualPer := func(st Step) float64 { return st.Load[0] / st.Actual }
	for _, st := range steps {
		load.hi = max(load.hi, finite(st.PerPod[0]), finite(actualPer(st)), finite(target))
	}
	load.hi *= 1.1
	drawPanel(&b, load, x, steps)
	line(&b, x, load, steps, actualColor, actualPer)
	line(&b, x, load, steps, "#1f5fbf", func(st Step) float64 { return st.PerPod[0] })
	line(&b, x, load, steps, "#d62728", func(Step) float64 { return target })
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write chart %s: %w", spec.Name, err)
	}
	return nil
}

// finite returns v, or 0 for NaN and infinities.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// xScale maps a step's time to the x coordinate.
func xScale(steps []Step) func(time.Time) float64 {
	start, span := steps[0].Time, steps[len(steps)-1].Time.Sub(steps[0].Time)
	return func(t time.Time) float64 {
		if span <= 0 {
			return marginLeft
		}
		return marginLeft + float64(t.Sub(start))/float64(span)*(chartWidth-marginLeft-20)
	}
}

// drawPanel draws p's frame, title, value ticks and, under it, time ticks.
func drawPanel(b *strings.Builder, p panel, x func(time.Time) float64, steps []Step) {
	right := chartWidth - 20
	fmt.Fprintf(b, `<text x="%d" y="%.1f">%s</text>`+"\n", marginLeft, p.top-8, html.EscapeString(p.title))
	fmt.Fprintf(b, `<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#ccc"/>`+"\n", marginLeft, p.top, right-marginLeft, panelHeight)
	for i := 0; i <= 4; i++ {
		v := p.lo + (p.hi-p.lo)*float64(i)/4
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text><line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/>`+"\n",
			marginLeft-6, p.y(v)+4, strconv.FormatFloat(v, 'g', 4, 64), marginLeft, right, p.y(v), p.y(v))
	}
	for i := 0; i <= 4; i++ {
		t := steps[0].Time.Add(time.Duration(float64(steps[len(steps)-1].Time.Sub(steps[0].Time)) * float64(i) / 4))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x(t), p.top+panelHeight+16, t.UTC().Format("15:04:05"))
	}
}

// line draws f over the steps as a step function; NaN values break it. The actual curves are
// drawn wide and light, so that the replayed one stays visible on top of them where they agree.
func line(b *strings.Builder, x func(time.Time) float64, p panel, steps []Step, color string, f func(Step) float64) {
	width := 2
	if color == actualColor {
		width = 6
	}
	var pts []string
	flush := func() {
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="%d" points="%s"/>`+"\n", color, width, strings.Join(pts, " "))
		}
		pts = pts[:0]
	}
	for i, st := range steps {
		v := f(st)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			flush()
			continue
		}
		y := p.y(v)
		if len(pts) > 0 {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(st.Time), p.y(f(steps[i-1]))))
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(st.Time), y))
	}
	flush()
}
