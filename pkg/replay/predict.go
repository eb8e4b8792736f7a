package replay

import (
	"fmt"
	"math"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// Prediction holds the settings of the replayed forecast.
type Prediction struct {
	// Method is the forecasting model.
	Method forecast.Method
	// LeadTime is how far ahead the forecast looks; 0 takes the spec's leadTimeSeconds, else the
	// model's ReadyDelay plus one step, as the controller's default (pod start-up plus a sync period).
	LeadTime time.Duration
	// Refresh is how often the model is refitted on the history before that time.
	Refresh time.Duration
}

// DefaultPrediction is the controller's default: double-seasonal Holt-Winters refitted every 5 minutes.
func DefaultPrediction() Prediction {
	return Prediction{Method: forecast.HoltWinters, Refresh: 5 * time.Minute}
}

// leadTime resolves p's lead time for spec.
func (p Prediction) leadTime(spec Spec, m Model) time.Duration {
	if p.LeadTime > 0 {
		return p.LeadTime
	}
	return specconv.LeadTime(spec.PodAutoscaler.Spec.Prediction, m.ReadyDelay+m.SyncPeriod)
}

// Variant is one way of running a spec in a comparison.
type Variant string

const (
	// Reactive runs the spec without its forecast: the metrics alone (and the schedules).
	Reactive Variant = "reactive"
	// Predictive adds the forecast of the fitted model, as ScaleOut.
	Predictive Variant = "predictive"
	// Oracle adds the real future load one lead time ahead: the best any forecast could do.
	Oracle Variant = "oracle"
)

// Comparison is one spec run reactive, predictive and oracle over the same trace.
type Comparison struct {
	// Spec is the spec compared.
	Spec Spec
	// LeadTime is the lead time used.
	LeadTime time.Duration
	// Method is the predictive run's model.
	Method forecast.Method
	// Steps holds each variant's steps.
	Steps map[Variant][]Step
	// Model and Naive are the accuracy, at the lead horizon, of the model's forecasts and of
	// seasonal-naive's (the same time last week, or day) against the load that came, at each
	// step of the trace.
	Model, Naive forecast.Accuracy
	// ModelPerStep and NaivePerStep are the same against the load's mean over the history's
	// step around that time: the resolution the models forecast at, the history's.
	ModelPerStep, NaivePerStep forecast.Accuracy
	// Persistence is the accuracy of persistence (the load at the step, one lead time later) at
	// the steps where the model answered: the model must beat it to earn its place.
	Persistence forecast.Accuracy
	// Refused counts the refits the model refused, by reason (a history it cannot fit, or a
	// model that does not earn its place, forecast.Model.Earns); their steps had no forecast.
	Refused map[string]int
	// Answered counts the steps by the model that answered for the first metric, "none" for the
	// steps without a forecast.
	Answered map[string]int
	// Forecasts are the model's forecasts of the first metric's load made at each step, for one
	// lead time later; NaN where there was none.
	Forecasts []float64
}

// Compare runs spec reactive, predictive and oracle over tr. history holds, per metric of the
// spec, the load history (at the forecast's resolution) from before tr's start to its end; at each
// refit the model sees only what precedes that time.
func Compare(spec Spec, tr Trace, history []forecast.Series, m Model, p Prediction) (Comparison, error) {
	if len(history) != len(spec.Metrics) {
		return Comparison{}, fmt.Errorf("compare %s: %d histories for %d metrics", spec.Name, len(history), len(spec.Metrics))
	}
	lead := p.leadTime(spec, m)
	if len(tr.Times) > 1 && lead%tr.Times[1].Sub(tr.Times[0]) != 0 {
		return Comparison{}, fmt.Errorf("compare %s: lead time %s is not a multiple of the step %s", spec.Name, lead, tr.Times[1].Sub(tr.Times[0]))
	}
	if lead > forecast.MaxHorizon-p.Refresh {
		return Comparison{}, fmt.Errorf("compare %s: lead time %s plus refresh %s beyond the forecast horizon %s", spec.Name, lead, p.Refresh, forecast.MaxHorizon)
	}
	c := Comparison{Spec: spec, LeadTime: lead, Method: p.Method, Steps: map[Variant][]Step{}, Refused: map[string]int{}, Answered: map[string]int{}}
	model := &fitted{metrics: spec.Metrics, tr: tr, history: history, method: p.Method, refresh: p.Refresh, lead: lead, refused: c.Refused,
		verdict: true}
	naive := &fitted{metrics: spec.Metrics, tr: tr, history: history, method: forecast.SeasonalNaive, refresh: p.Refresh, lead: lead, refused: map[string]int{}}
	c.Steps[Reactive] = Simulate(spec, tr, m)
	c.Steps[Predictive] = simulate(spec, tr, m, model)
	c.Steps[Oracle] = simulate(spec, tr, m, oracle{metrics: spec.Metrics, tr: tr, lead: lead})
	for i := range tr.Times {
		naive.forecast(i)
		actual := tr.loadAt(0, i, lead)
		c.Model.Add(model.trail[i], actual)
		c.Naive.Add(naive.trail[i], actual)
		if !math.IsNaN(model.trail[i]) {
			c.Persistence.Add(tr.Loads[0][i], actual)
		}
		c.Answered[model.answered[i]]++
		if len(history) > 0 {
			mean := tr.meanAround(0, i, lead, history[0].Step)
			c.ModelPerStep.Add(model.trail[i], mean)
			c.NaivePerStep.Add(naive.trail[i], mean)
		}
	}
	c.Forecasts = model.trail
	return c, nil
}

// forecaster gives a step's forecast input.
type forecaster interface {
	forecast(i int) *decision.Forecast
}

// loadAt is metric k's load one lead after step i: NaN past the trace or between its steps.
func (tr Trace) loadAt(k, i int, lead time.Duration) float64 {
	at := tr.Times[i].Add(lead)
	if len(tr.Times) < 2 {
		return math.NaN()
	}
	step := tr.Times[1].Sub(tr.Times[0])
	j := i + int(lead/step)
	if lead%step != 0 || j >= len(tr.Times) || !tr.Times[j].Equal(at) {
		return math.NaN()
	}
	return tr.Loads[k][j]
}

// meanAround is the mean of metric k's load over the step of width step centred one lead after
// step i, as a history value at that time is; NaN when the trace does not cover that step.
func (tr Trace) meanAround(k, i int, lead, step time.Duration) float64 {
	at := tr.Times[i].Add(lead)
	from, to := at.Add(-step/2), at.Add(step/2)
	if from.Before(tr.Times[0]) || to.After(tr.Times[len(tr.Times)-1]) {
		return math.NaN()
	}
	var sum float64
	n := 0
	for j := i; j < len(tr.Times) && tr.Times[j].Before(to); j++ {
		if !tr.Times[j].Before(from) && !math.IsNaN(tr.Loads[k][j]) {
			sum += tr.Loads[k][j]
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// oracle forecasts the load that really comes one lead time ahead.
type oracle struct {
	metrics []MetricSpec
	tr      Trace
	lead    time.Duration
}

func (o oracle) forecast(i int) *decision.Forecast {
	f := &decision.Forecast{Mode: decision.ForecastScaleOut, LeadTime: o.lead, Loads: map[decision.MetricID]float64{}}
	for k, ms := range o.metrics {
		f.Loads[ms.ID()] = o.tr.loadAt(k, i, o.lead) * 1000
	}
	return f
}

// fitted forecasts with a model refitted every refresh on the history before the step's time.
type fitted struct {
	metrics []MetricSpec
	tr      Trace
	history []forecast.Series
	method  forecast.Method
	refresh time.Duration
	lead    time.Duration
	models  []*forecast.Model
	fitAt   time.Time
	refused map[string]int
	// verdict applies forecast.Model.Earns at each refit, as the controller does: a model that
	// does not earn its place at the lead time answers nothing.
	verdict bool
	// trail holds the first metric's forecast at each step so far, NaN without one; answered the
	// method that made it, "none" without one.
	trail    []float64
	answered []string
}

func (f *fitted) forecast(i int) *decision.Forecast {
	now := f.tr.Times[i]
	if f.models == nil || !now.Before(f.fitAt.Add(f.refresh)) {
		f.refit(now)
	}
	out := &decision.Forecast{Mode: decision.ForecastScaleOut, LeadTime: f.lead, Loads: map[decision.MetricID]float64{}}
	for k, m := range f.models {
		v, up := math.NaN(), math.NaN()
		if m != nil {
			at, err := m.AtFrom(now.Add(f.lead), now, f.tr.Loads[k][i])
			if m.Method == forecast.SeasonalNaive {
				at, err = m.At(now.Add(f.lead)) // the baseline as defined: last week's value
			}
			if err == nil {
				v, up = at, at*(1+m.Headroom)
			}
		}
		if k == 0 {
			f.trail = append(f.trail, v)
			f.answered = append(f.answered, "none")
			if !math.IsNaN(v) {
				f.answered[len(f.answered)-1] = string(m.Method)
			}
		}
		out.Loads[f.metrics[k].ID()] = up * 1000
	}
	return out
}

// refit fits every metric's history before now; a model refused (or, with verdict, one that does
// not earn its place) is nil.
func (f *fitted) refit(now time.Time) {
	f.models, f.fitAt = f.models[:0], now
	for _, h := range f.history {
		n := min(len(h.Values), max(0, known(h, now)))
		m, err := forecast.Fit(forecast.Series{Start: h.Start, Step: h.Step, Values: h.Values[:n]}, f.method)
		if err == nil && f.verdict {
			err = m.Earns(f.lead)
		}
		if err != nil {
			f.refused[forecast.Reason(err)]++
			m = nil
		}
		f.models = append(f.models, m)
	}
}

// known is how many values of h are known at now: a value is the mean over the step centred on
// its time, so it is known half a step after it.
func known(h forecast.Series, now time.Time) int {
	d := now.Sub(h.Start) - h.Step/2
	if d < 0 {
		return 0
	}
	return int(d/h.Step) + 1
}

// Downsample turns a load at the trace's steps into a history at step: each value is the mean of
// the loads within half a step of its time, NaN where none is known. The first value is at from.
func Downsample(times []time.Time, load []float64, from time.Time, step time.Duration) forecast.Series {
	s := forecast.Series{Start: from, Step: step}
	if len(times) == 0 {
		return s
	}
	n := int((times[len(times)-1].Sub(from)+step/2)/step) + 1
	sum, cnt := make([]float64, n), make([]int, n)
	for i, t := range times {
		k := int(math.Floor((float64(t.Sub(from)) + float64(step)/2) / float64(step)))
		if k < 0 || k >= n || math.IsNaN(load[i]) {
			continue
		}
		sum[k] += load[i]
		cnt[k]++
	}
	s.Values = make([]float64, n)
	for k := range s.Values {
		s.Values[k] = math.NaN()
		if cnt[k] > 0 {
			s.Values[k] = sum[k] / float64(cnt[k])
		}
	}
	return s
}
