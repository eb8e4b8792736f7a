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

// Variants are the runs of a comparison, in output order.
func Variants() []Variant { return []Variant{Reactive, Predictive, Oracle} }

// Summaries condenses c into one summary per variant, the forecast's accuracy on the predictive
// one's.
func (c Comparison) Summaries(step time.Duration, requests *Requests) []Summary {
	out := make([]Summary, 0, 3)
	for _, v := range Variants() {
		s := Summarize(c.Spec, c.Steps[v], step, requests)
		s.Name = fmt.Sprintf("%s (%s)", c.Spec.Name, v)
		if v == Predictive {
			s.Forecast = &ForecastSummary{Method: string(c.Method), LeadTime: c.LeadTime, WAPE: c.Model.WAPE(), NaiveWAPE: c.Naive.WAPE(),
				PersistenceWAPE: c.Persistence.WAPE(), WAPEPerStep: c.ModelPerStep.WAPE(), NaiveWAPEPerStep: c.NaivePerStep.WAPE(),
				Refused: c.Refused, Answered: c.Answered}
		}
		out = append(out, s)
	}
	return out
}

// ForecastSummary is the forecast's accuracy in a comparison.
type ForecastSummary struct {
	// Method is the model; LeadTime how far ahead it forecast.
	Method string
	// LeadTime is the forecast's horizon.
	LeadTime time.Duration
	// WAPE and NaiveWAPE are the model's and seasonal-naive's WAPE at the lead horizon, against
	// the load at each step of the trace.
	WAPE, NaiveWAPE float64
	// PersistenceWAPE is persistence's (the load at the step, one lead later) at the steps where
	// the model answered.
	PersistenceWAPE float64
	// WAPEPerStep and NaiveWAPEPerStep are the same against the load's mean over the history's
	// step: the resolution the models forecast at.
	WAPEPerStep, NaiveWAPEPerStep float64
	// Refused counts the refits refused, by reason.
	Refused map[string]int
	// Answered counts the steps by the model that answered, "none" for those without a forecast.
	Answered map[string]int
}

// needed is the replicas the first metric's load needs at its target, NaN when unknown.
func needed(c Comparison, st Step, requests *Requests) float64 {
	if len(st.Load) == 0 {
		return math.NaN()
	}
	return math.Ceil(st.Load[0] / TargetPerPod(c.Spec.Metrics[0].Target, requests))
}

// WriteComparisonCSV writes c as a table: time, the first metric's load, the replicas it needs,
// the replicas and ready pods of each variant, and the model's forecast of the load made one lead
// time before.
func WriteComparisonCSV(w io.Writer, c Comparison, requests *Requests) error {
	cw := csv.NewWriter(w)
	header := []string{"time", c.Spec.Metrics[0].Name + "_load", "needed_replicas"}
	for _, v := range Variants() {
		header = append(header, string(v)+"_replicas", string(v)+"_ready")
	}
	header = append(header, "forecast_load")
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("write comparison header: %w", err)
	}
	lag := int(c.LeadTime / c.step())
	for i, st := range c.Steps[Predictive] {
		row := []string{st.Time.UTC().Format(time.RFC3339), number(st.Load[0]), number(needed(c, st, requests))}
		for _, v := range Variants() {
			row = append(row, strconv.Itoa(int(c.Steps[v][i].Replicas)), strconv.Itoa(int(c.Steps[v][i].Ready)))
		}
		fc := math.NaN()
		if j := i - lag; j >= 0 && j < len(c.Forecasts) {
			fc = c.Forecasts[j]
		}
		row = append(row, number(fc))
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write comparison row: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write comparison: %w", err)
	}
	return nil
}

// step is the time between the comparison's steps.
func (c Comparison) step() time.Duration {
	st := c.Steps[Reactive]
	if len(st) < 2 {
		return time.Second
	}
	return st[1].Time.Sub(st[0].Time)
}

// Colours of the comparison chart.
const (
	colorLoad       = "#888"
	colorReactive   = "#e6550d"
	colorPredictive = "#1f5fbf"
	colorOracle     = "#31a354"
)

// WriteComparisonSVG draws c over time: the first metric's load and the model's forecast of it,
// then the replicas the load needs and the ready pods of the reactive, predictive and oracle runs.
func WriteComparisonSVG(w io.Writer, c Comparison, requests *Requests) error {
	all := c.Steps[Predictive]
	if len(all) == 0 {
		return fmt.Errorf("chart %s: no steps", c.Spec.Name)
	}
	index := make(map[time.Time]int, len(all))
	for i, st := range all {
		index[st.Time] = i
	}
	// One point per about a pixel: a day of 15 s steps would draw 5760 points per line.
	var steps []Step
	for i := 0; i < len(all); i += max(1, len(all)/chartWidth) {
		steps = append(steps, all[i])
	}
	var b strings.Builder
	height := marginTop + 2*panelHeight + panelGap + 40
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="20" font-size="14">%s: %s, lead time %s, from %s to %s</text>`+"\n",
		marginLeft, html.EscapeString(c.Spec.Name), c.Method, c.LeadTime, steps[0].Time.UTC().Format(time.RFC3339), steps[len(steps)-1].Time.UTC().Format(time.RFC3339))
	x := xScale(steps)
	lag := int(c.LeadTime / c.step())
	forecastAt := func(st Step) float64 {
		if j := index[st.Time] - lag; j >= 0 && j < len(c.Forecasts) {
			return c.Forecasts[j]
		}
		return math.NaN()
	}
	load := panel{top: marginTop, title: c.Spec.Metrics[0].Name + ": load (grey), forecast one lead time before (blue)"}
	for _, st := range steps {
		load.hi = max(load.hi, finite(st.Load[0]), finite(forecastAt(st)))
	}
	load.hi *= 1.05
	drawPanel(&b, load, x, steps)
	line(&b, x, load, steps, colorLoad, func(st Step) float64 { return st.Load[0] })
	line(&b, x, load, steps, colorPredictive, forecastAt)
	reps := panel{top: marginTop + panelHeight + panelGap,
		title: "replicas: needed by the load (grey), ready pods reactive (orange), predictive (blue), oracle (green)"}
	for _, st := range steps {
		reps.hi = max(reps.hi, finite(needed(c, st, requests)), float64(st.Replicas))
	}
	reps.hi = max(reps.hi*1.05, 1)
	drawPanel(&b, reps, x, steps)
	line(&b, x, reps, steps, colorLoad, func(st Step) float64 { return needed(c, st, requests) })
	for _, v := range []struct {
		variant Variant
		color   string
	}{{Reactive, colorReactive}, {Oracle, colorOracle}, {Predictive, colorPredictive}} {
		other := c.Steps[v.variant]
		line(&b, x, reps, steps, v.color, func(st Step) float64 { return float64(other[index[st.Time]].Ready) })
	}
	b.WriteString("</svg>\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write chart %s: %w", c.Spec.Name, err)
	}
	return nil
}
