package replay

import (
	"context"
	"fmt"

	"github.com/prometheus/common/model"
)

// RangeMemo holds the answers one replay has read, keyed by query and range: the metrics and
// specs that ask the same query (one namespace, metric and selector; for Object metrics every
// object of the kind at once) share one read, so the cost grows with the distinct queries, not
// with the metrics or objects. It is not safe for concurrent use.
type RangeMemo struct {
	matrices map[memoKey]model.Matrix
	series   map[memoKey][]model.LabelSet
}

// memoKey is a query over a window.
type memoKey struct {
	query string
	w     Window
}

// NewRangeMemo returns an empty RangeMemo.
func NewRangeMemo() *RangeMemo {
	return &RangeMemo{matrices: map[memoKey]model.Matrix{}, series: map[memoKey][]model.LabelSet{}}
}

// matrix runs a range query over w (see matrixChunks), or returns the answer the memo holds.
func (r *Reader) matrix(ctx context.Context, query string, w Window) (model.Matrix, error) {
	key := memoKey{query: query, w: w}
	if r.Memo != nil {
		if m, ok := r.Memo.matrices[key]; ok {
			return m, nil
		}
	}
	m, err := r.matrixChunks(ctx, query, w)
	if err == nil && r.Memo != nil {
		r.Memo.matrices[key] = m
	}
	return m, err
}

// series lists the series matching query in w, for discovery, or returns the answer the memo holds.
func (r *Reader) series(ctx context.Context, query string, w Window) ([]model.LabelSet, error) {
	key := memoKey{query: query, w: w}
	if r.Memo != nil {
		if sets, ok := r.Memo.series[key]; ok {
			return sets, nil
		}
	}
	sets, _, _, err := r.Source.Series(ctx, []string{query}, w.From, w.To)
	if err != nil {
		return nil, fmt.Errorf("discover series %s: %w", query, err)
	}
	if r.Memo != nil {
		r.Memo.series[key] = sets
	}
	return sets, nil
}
