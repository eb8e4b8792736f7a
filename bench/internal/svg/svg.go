package svg

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Geometry and style, in SVG user units.
const (
	width, height        = 1040.0, 480.0
	plotL, plotR         = 80.0, width - 310
	plotT, plotB         = 70.0, height - 70
	colorGrid, colorText = "#e5e5e5", "#222"
	colorMuted           = "#666"
	fontFamily           = "DejaVu Sans, Helvetica, Arial, sans-serif"
)

// palette colours the series in order.
var palette = []string{"#08519c", "#e6550d", "#31a354", "#756bb1", "#d62728", "#636363"}

type canvas struct{ b strings.Builder }

func (c *canvas) printf(format string, args ...any) { fmt.Fprintf(&c.b, format, args...) }

func (c *canvas) begin(title, subtitle string) {
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="%s">`+"\n",
		width, height, width, height, fontFamily)
	c.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	c.printf(`<text x="%.0f" y="28" font-size="18" font-weight="bold" fill="%s">%s</text>`+"\n", plotL, colorText, html.EscapeString(title))
	c.printf(`<text x="%.0f" y="48" font-size="12" fill="%s">%s</text>`+"\n", plotL, colorMuted, html.EscapeString(subtitle))
}

func (c *canvas) end() string {
	c.printf("</svg>\n")
	return c.b.String()
}

// frame draws the plot's box and the axis labels.
func (c *canvas) frame(xLabel, yLabel string) {
	c.printf(`<path d="M%.0f %.0f V%.0f H%.0f" fill="none" stroke="%s"/>`+"\n", plotL, plotT, plotB, plotR, colorText)
	c.printf(`<text x="%.0f" y="%.0f" font-size="13" fill="%s" text-anchor="middle">%s</text>`+"\n",
		(plotL+plotR)/2, plotB+45, colorText, html.EscapeString(xLabel))
	c.printf(`<text transform="translate(%.0f %.0f) rotate(-90)" font-size="13" fill="%s" text-anchor="middle">%s</text>`+"\n",
		plotL-55, (plotT+plotB)/2, colorText, html.EscapeString(yLabel))
}

func (c *canvas) xTick(x float64, label string) {
	c.printf(`<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s"/>`+"\n", x, plotT, x, plotB, colorGrid)
	c.printf(`<text x="%.1f" y="%.0f" font-size="12" fill="%s" text-anchor="middle">%s</text>`+"\n", x, plotB+18, colorText, html.EscapeString(label))
}

func (c *canvas) yTick(y float64, label string) {
	c.printf(`<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s"/>`+"\n", plotL, y, plotR, y, colorGrid)
	c.printf(`<text x="%.0f" y="%.1f" font-size="12" fill="%s" text-anchor="end">%s</text>`+"\n", plotL-8, y+4, colorText, html.EscapeString(label))
}

// legend lists names with their colours right of the plot.
func (c *canvas) legend(names []string) {
	for i, n := range names {
		y := plotT + 10 + float64(i)*22
		c.printf(`<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"/>`+"\n", plotR+15, y, plotR+40, y, color(i))
		c.printf(`<text x="%.0f" y="%.0f" font-size="12" fill="%s">%s</text>`+"\n", plotR+46, y+4, colorText, html.EscapeString(n))
	}
}

func color(i int) string { return palette[i%len(palette)] }

// niceStep returns a round tick step (1, 2 or 5 × 10^k) giving about n ticks over span.
func niceStep(span float64, n int) float64 {
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return 1
	}
	raw := span / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// formatTick prints a tick value without trailing zeros.
func formatTick(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
