package prometheus

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/podpilot/podpilot/pkg/flight"
)

// MaxConcurrentChunks bounds how many queries of one request EachQuery runs at once: a request
// split into several queries (rules.Rule.QueryChunks) must not flood the backend.
const MaxConcurrentChunks = 4

// EachQuery runs fetch for every query, at most MaxConcurrentChunks at a time, and returns the
// answers in the order of queries. The first error fails the whole answer (the others are
// cancelled): a request never gets an answer for only some of its queries. A panic in fetch is
// that query's error (flight.ErrPanicked), never the process' end.
func EachQuery[T any](ctx context.Context, queries []string, fetch func(ctx context.Context, q string) (T, error)) ([]T, error) {
	out := make([]T, len(queries))
	if len(queries) == 1 {
		v, err := flight.Recovering(ctx, func(ctx context.Context) (T, error) { return fetch(ctx, queries[0]) })
		if err != nil {
			return nil, err
		}
		out[0] = v
		return out, nil
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(MaxConcurrentChunks)
	for i, q := range queries {
		g.Go(func() error {
			v, err := flight.Recovering(gctx, func(ctx context.Context) (T, error) { return fetch(ctx, q) })
			out[i] = v
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
