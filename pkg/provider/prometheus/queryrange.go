package prometheus

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// opQueryRange is the range query operation, as named in errors, logs and metrics.
const opQueryRange = "query_range"

// MaxRangePoints is the most points Prometheus returns per series from one range query.
const MaxRangePoints = 11000

// QueryRange implements Client. It is for history, read rarely (the forecast's, once per
// distinct metric per refresh): the answer goes through client_golang's decoder, which holds it
// whole, rather than the streaming one of Query.
func (c *client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	var out model.Matrix
	err := c.call(ctx, opQueryRange, query, func(ctx context.Context) (envelope, error) {
		if step <= 0 || end.Before(start) || end.Sub(start)/step >= MaxRangePoints {
			return envelope{}, fmt.Errorf("%w: range %s to %s at %s", ErrBadQuery, formatTime(start), formatTime(end), step)
		}
		v, warnings, _, err := v1.NewAPI(c.transport.api).QueryRange(ctx, query, v1.Range{Start: start, End: end, Step: step}, v1.WithTimeout(c.timeout))
		env := envelope{warnings: warnings}
		if err != nil {
			return env, err
		}
		m, ok := v.(model.Matrix)
		if !ok {
			return env, fmt.Errorf("%w: a %s, not a matrix", ErrBadQuery, v.Type())
		}
		out = m
		return env, nil
	})
	return out, err
}
