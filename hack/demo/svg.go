package main

import (
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 1000.0, 580.0
	plotL, plotR           = 80.0, chartW - 80
	plotT, plotB           = 118.0, chartH - 120
	replicaAxisMax         = maxReplicas + 1
	colorOffered           = "#6baed6"
	colorServed            = "#08519c"
	colorTarget            = "#d62728"
	colorReplicas          = "#e6550d"
	colorReady             = "#fd8d3c"
	colorCPU               = "#31a354"
	colorGrid, colorBand   = "#e5e5e5", "#f4f4f4"
	colorText, colorMuted  = "#222", "#666"
	fontFamily             = "DejaVu Sans, Helvetica, Arial, sans-serif"
	legendY, legendRow     = chartH - 58, 22.0
	secondsPerTickFallback = 30
)

// chart maps the samples onto the plot area.
type chart struct {
	b            strings.Builder
	span         float64 // seconds on the x axis
	qpsMax       float64 // top of the left axis
	qpsTickEvery float64
	// cpu says whether any sample has a cpu Utilization, drawn on the qps
	// axis scaled so that the example's target (50%) is on the target line.
	cpu bool
}

func (c *chart) x(at time.Duration) float64 { return plotL + at.Seconds()/c.span*(plotR-plotL) }
func (c *chart) yQPS(v float64) float64     { return plotB - v/c.qpsMax*(plotB-plotT) }
func (c *chart) yCPU(util int32) float64 {
	return c.yQPS(float64(util) * targetPerPod / cpuTargetPercent)
}
func (c *chart) yReplicas(r int32) float64 {
	return plotB - float64(r)/replicaAxisMax*(plotB-plotT)
}

func (c *chart) printf(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

// writeSVG writes the samples as a hand-written SVG chart: offered and served
// qps per pod, the target and the cpu Utilization (scaled so that its target
// is on the target line, with its own scale inside the right edge) on the
// left axis, replicas and pods Ready as step lines on the right axis, phases
// shaded.
func writeSVG(path string, samples []sample, subtitle []string) error {
	if len(samples) == 0 {
		return fmt.Errorf("write chart %s: no samples", path)
	}
	svg := renderSVG(samples, subtitle)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	if err := os.WriteFile(path, []byte(svg), 0o644); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// renderSVG returns the chart of samples, which must not be empty, as an SVG
// document.
func renderSVG(samples []sample, subtitle []string) string {
	c := newChart(samples)
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="%s">`+"\n",
		chartW, chartH, chartW, chartH, fontFamily)
	c.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	c.printf(`<text x="%.0f" y="34" font-size="20" font-weight="bold" fill="%s">podpilot demo: %s scaled on %s</text>`+"\n",
		plotL, colorText, workload, metricName)
	for i, line := range subtitle {
		c.printf(`<text x="%.0f" y="%d" font-size="12" fill="%s">%s</text>`+"\n", plotL, 58+i*17, colorMuted, html.EscapeString(line))
	}
	c.phases(samples)
	c.axes()
	c.series(samples)
	c.legend()
	c.printf("</svg>\n")
	return c.b.String()
}

func newChart(samples []sample) *chart {
	last := samples[len(samples)-1].at.Seconds()
	c := &chart{span: math.Max(secondsPerTickFallback, math.Ceil(last/secondsPerTickFallback)*secondsPerTickFallback)}
	top := targetPerPod
	for _, s := range samples {
		top = math.Max(top, math.Max(s.offeredPerPod, s.served))
		if s.cpuOK {
			c.cpu = true
			top = math.Max(top, float64(s.cpuUtil)*targetPerPod/cpuTargetPercent)
		}
	}
	c.qpsTickEvery = 1000
	if top <= 3000 {
		c.qpsTickEvery = 500
	}
	c.qpsMax = math.Ceil(top*1.08/c.qpsTickEvery) * c.qpsTickEvery
	return c
}

// phases shades every other phase of the profile and names each at the top.
func (c *chart) phases(samples []sample) {
	var start time.Duration
	end := samples[len(samples)-1].at
	for i, p := range profile {
		from, to := start, min(start+p.Duration, end)
		start += p.Duration
		if from >= end {
			break
		}
		if i%2 == 0 {
			c.printf(`<rect x="%.1f" y="%.0f" width="%.1f" height="%.0f" fill="%s"/>`+"\n",
				c.x(from), plotT, c.x(to)-c.x(from), plotB-plotT, colorBand)
		}
		c.printf(`<text x="%.1f" y="%.0f" font-size="12" fill="%s" text-anchor="middle">%s</text>`+"\n",
			(c.x(from)+c.x(to))/2, plotT+16, colorMuted, p.Name)
	}
}

// axes draws the grid, both y axes, the x axis and their labels.
func (c *chart) axes() {
	for v := 0.0; v <= c.qpsMax+1e-9; v += c.qpsTickEvery {
		y := c.yQPS(v)
		c.printf(`<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s"/>`+"\n", plotL, y, plotR, y, colorGrid)
		c.printf(`<text x="%.0f" y="%.1f" font-size="12" fill="%s" text-anchor="end">%.0f</text>`+"\n", plotL-8, y+4, colorServed, v)
		if c.cpu && v > 0 {
			c.printf(`<text x="%.0f" y="%.1f" font-size="11" fill="%s" text-anchor="end" stroke="white" stroke-width="3" paint-order="stroke">%.0f%%</text>`+"\n",
				plotR-4, y-3, colorCPU, v*cpuTargetPercent/targetPerPod)
		}
	}
	for r := int32(0); r <= replicaAxisMax; r++ {
		c.printf(`<text x="%.0f" y="%.1f" font-size="12" fill="%s">%d</text>`+"\n", plotR+8, c.yReplicas(r)+4, colorReplicas, r)
	}
	for s := 0.0; s <= c.span+1e-9; s += secondsPerTickFallback {
		x := c.x(time.Duration(s * float64(time.Second)))
		c.printf(`<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s"/>`+"\n", x, plotB, x, plotB+5, colorText)
		c.printf(`<text x="%.1f" y="%.0f" font-size="12" fill="%s" text-anchor="middle">%s</text>`+"\n",
			x, plotB+20, colorText, clockString(time.Duration(s*float64(time.Second))))
	}
	c.printf(`<path d="M%.0f %.0f V%.0f H%.0f V%.0f" fill="none" stroke="%s"/>`+"\n", plotL, plotT, plotB, plotR, plotT, colorText)
	c.printf(`<text x="%.0f" y="%.0f" font-size="13" fill="%s" text-anchor="middle">time since the load profile started (m:ss)</text>`+"\n",
		(plotL+plotR)/2, plotB+42, colorText)
	mid := (plotT + plotB) / 2
	c.printf(`<text transform="translate(%.0f %.0f) rotate(-90)" font-size="13" fill="%s" text-anchor="middle">qps per pod</text>`+"\n",
		plotL-52, mid, colorServed)
	c.printf(`<text transform="translate(%.0f %.0f) rotate(90)" font-size="13" fill="%s" text-anchor="middle">replicas</text>`+"\n",
		plotR+40, mid, colorReplicas)
}

// series draws the target, the replicas and pods Ready, the offered and
// served qps per pod, and the cpu Utilization.
func (c *chart) series(samples []sample) {
	yt := c.yQPS(targetPerPod)
	c.printf(`<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="8 5"/>`+"\n",
		plotL, yt, plotR, yt, colorTarget)
	c.printf(`<text x="%.0f" y="%.1f" font-size="12" fill="%s" stroke="white" stroke-width="4" paint-order="stroke">target %.0f</text>`+"\n",
		plotL+6, yt-6, colorTarget, targetPerPod)

	path := c.stepPath(samples, func(s sample) int32 { return s.current })
	c.printf(`<path d="%s V%.0f H%.1f Z" fill="%s" fill-opacity="0.10" stroke="none"/>`+"\n",
		path, plotB, c.x(samples[0].at), colorReplicas)
	c.printf(`<path d="%s" fill="none" stroke="%s" stroke-width="2.5"/>`+"\n", path, colorReplicas)
	c.printf(`<path d="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="4 3"/>`+"\n",
		c.stepPath(samples, func(s sample) int32 { return s.ready }), colorReady)

	var offered []string
	for _, s := range samples {
		offered = append(offered, fmt.Sprintf("%.1f,%.1f", c.x(s.at), c.yQPS(s.offeredPerPod)))
	}
	c.printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2" stroke-dasharray="6 4"/>`+"\n",
		strings.Join(offered, " "), colorOffered)
	c.brokenLine(samples, colorServed, func(s sample) (float64, bool) { return c.yQPS(s.served), s.servedOK })
	c.brokenLine(samples, colorCPU, func(s sample) (float64, bool) { return c.yCPU(s.cpuUtil), s.cpuOK })
}

// stepPath is the path of a replica count as steps, shown for one more tick
// after the last sample so that the last count is a level, not just a drop.
func (c *chart) stepPath(samples []sample, count func(sample) int32) string {
	step := []string{fmt.Sprintf("M%.1f %.1f", c.x(samples[0].at), c.yReplicas(count(samples[0])))}
	for _, s := range samples[1:] {
		step = append(step, fmt.Sprintf("H%.1f V%.1f", c.x(s.at), c.yReplicas(count(s))))
	}
	lastAt := min(samples[len(samples)-1].at+tick, time.Duration(c.span*float64(time.Second)))
	step = append(step, fmt.Sprintf("H%.1f", c.x(lastAt)))
	return strings.Join(step, " ")
}

// brokenLine draws y(s) over the samples, broken where it has no value.
func (c *chart) brokenLine(samples []sample, color string, y func(sample) (float64, bool)) {
	var seg []string
	flush := func() {
		if len(seg) > 0 {
			c.printf(`<polyline points="%s" fill="none" stroke="%s" stroke-width="2.5"/>`+"\n", strings.Join(seg, " "), color)
		}
		seg = nil
	}
	for _, s := range samples {
		v, ok := y(s)
		if !ok {
			flush()
			continue
		}
		seg = append(seg, fmt.Sprintf("%.1f,%.1f", c.x(s.at), v))
	}
	flush()
}

// legend names each line under the x axis label: the per-pod values in the
// first row, the replicas in the second.
func (c *chart) legend() {
	type item struct{ label, color, dash string }
	rows := [][]item{
		{{"offered qps per pod", colorOffered, "6 4"}, {"served qps per pod (custom.metrics.k8s.io)", colorServed, ""}},
		{{"target 2000 per pod", colorTarget, "8 5"}, {"replicas (right axis)", colorReplicas, ""}, {"pods Ready", colorReady, "4 3"}},
	}
	if c.cpu {
		rows[0] = append(rows[0], item{"cpu Utilization (inner right scale)", colorCPU, ""})
	}
	for i, row := range rows {
		x, y := plotL, legendY+float64(i)*legendRow
		for _, it := range row {
			c.printf(`<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/>`+"\n",
				x, y, x+28, y, it.color, it.dash)
			c.printf(`<text x="%.0f" y="%.0f" font-size="12" fill="%s">%s</text>`+"\n", x+34, y+4, colorText, it.label)
			x += 34 + float64(len(it.label))*6.6 + 26
		}
	}
}
