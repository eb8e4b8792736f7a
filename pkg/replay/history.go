package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
)

// History reads each metric's load over span before w and through w, at step, for the forecast:
// the same rendered query as Trace, summed over the workload's pods. Each value is the load
// around its time: the query is evaluated half a step later, and for a step above one minute
// averaged over the step with a subquery. The range is read in chunks of at most maxPoints.
func (r *Reader) History(ctx context.Context, spec Spec, w Window, span, step time.Duration) ([]forecast.Series, error) {
	start := w.From.Add(-span).Truncate(step)
	hw := Window{From: start.Add(step / 2), To: w.To.Add(step / 2), Step: step}
	podRe := r.podPattern(spec)
	out := make([]forecast.Series, 0, len(spec.Metrics))
	for _, ms := range spec.Metrics {
		mr, err := r.metricRead(ctx, ms, podRe, w)
		if err != nil {
			return nil, err
		}
		q := mr.query
		if step > time.Minute {
			q = fmt.Sprintf("avg_over_time((%s)[%s:%s])", q, model.Duration(step), model.Duration(time.Minute))
		}
		m, err := r.matrix(ctx, q, hw)
		if err != nil {
			return nil, fmt.Errorf("read the history of %s %s: %w", ms.Kind, ms.Name, err)
		}
		load, _ := sumSeries(m, mr, hw.Times())
		out = append(out, forecast.Series{Start: start, Step: step, Values: load})
	}
	return out, nil
}

// chunks splits w into windows of at most n steps each.
func (w Window) chunks(n int) []Window {
	var out []Window
	for from := w.From; !from.After(w.To); from = from.Add(time.Duration(n) * w.Step) {
		to := from.Add(time.Duration(n-1) * w.Step)
		if to.After(w.To) {
			to = w.To
		}
		out = append(out, Window{From: from, To: to, Step: w.Step})
	}
	return out
}
