package rules

// Splitting: a request for many objects by name renders a query that grows with the number of
// names (`pod=~"a|b|…"`, or the names of .LabelValuesByName). When it would be longer than
// Limits.MaxQueryBytes (--metrics-max-query-bytes), the names are split into chunks, in order,
// each rendering a query within the limit; the caller runs every chunk's query and merges the
// answers, failing the whole answer if one chunk fails. That holds only for a template whose
// answer for some objects is, object by object, its answer for all of them
// (separability.checkSplit); for any other template, and for a single object whose query is
// still too long, the request fails with ErrQueryTooLarge naming the limit and why.

import (
	"errors"
	"fmt"
	"math"
	"regexp"
)

// QueryChunks renders the PromQL for req (see Query) as one query, or, when that would exceed
// the limit of the rule set, as several queries over consecutive chunks of req.Names, each
// within the limit; together they answer req. A template that cannot be split fails with
// ErrQueryTooLarge naming the limit and the rule's seriesQuery.
func (r *Rule) QueryChunks(req ObjectRequest) ([]string, error) {
	if err := checkSeriesName(req.Series); err != nil {
		return nil, err
	}
	qs, err := splitObjectQuery(r.query, r.resources, req)
	if err != nil {
		return nil, fmt.Errorf("rule with seriesQuery %q: %w", r.seriesQuery, err)
	}
	return qs, nil
}

// ContainerQueryChunks is ContainerQuery split as QueryChunks splits Query.
func (r *ResourceQuery) ContainerQueryChunks(req ObjectRequest) ([]string, error) {
	qs, err := splitObjectQuery(r.container, r.resources, req, r.containerLabel)
	if err != nil {
		return nil, fmt.Errorf("resource rule's containerQuery: %w", err)
	}
	return qs, nil
}

// NodeQueryChunks is NodeQuery split as QueryChunks splits Query.
func (r *ResourceQuery) NodeQueryChunks(req ObjectRequest) ([]string, error) {
	qs, err := splitObjectQuery(r.node, r.resources, req)
	if err != nil {
		return nil, fmt.Errorf("resource rule's nodeQuery: %w", err)
	}
	return qs, nil
}

// splitObjectQuery renders objectQuery for req, split into chunks of names when it is too long.
func splitObjectQuery(c *compiledQuery, rm *resourceMapping, req ObjectRequest, extraGroupBy ...string) ([]string, error) {
	q, err := objectQuery(c, rm, req, extraGroupBy...)
	if err == nil {
		return []string{q}, nil
	}
	if !errors.Is(err, ErrQueryTooLarge) || req.AllObjects || len(req.Names) < 2 {
		return nil, err
	}
	resLabel, lerr := rm.labelForResource(req.Resource)
	if lerr != nil {
		return nil, lerr
	}
	if c.sep != nil {
		if serr := c.sep.checkSplit(append([]string{resLabel}, extraGroupBy...)); serr != nil {
			return nil, fmt.Errorf("%w; the query for %d objects of %s cannot be split into queries for fewer objects: %w",
				err, len(req.Names), req.Resource.String(), serr)
		}
	}
	render := func(cq *compiledQuery, names []string) (string, error) {
		r := req
		r.Names = names
		return objectQuery(cq, rm, r, extraGroupBy...)
	}
	bounded := func(names []string) (string, error) { return render(c, names) }
	if _, err := bounded(req.Names[:1]); err != nil {
		// Too long for one object already (a huge metric selector): splitting cannot help.
		return nil, fmt.Errorf("%s, even for one object: %w", req.Resource.String(), err)
	}
	var out []string
	for _, chunk := range packNames(req.Names, chunkBudget(c, render, req.Names)) {
		qs, err := renderSplit(bounded, chunk)
		if err != nil {
			return nil, fmt.Errorf("%s, split into queries for fewer objects: %w", req.Resource.String(), err)
		}
		out = append(out, qs...)
	}
	return out, nil
}

// renderSplit renders names as one query, or halves them until each half fits: the fallback
// for a template whose length is not linear in the names' bytes.
func renderSplit(render func([]string) (string, error), names []string) ([]string, error) {
	q, err := render(names)
	if err == nil {
		return []string{q}, nil
	}
	if !errors.Is(err, ErrQueryTooLarge) || len(names) < 2 {
		return nil, err
	}
	half := len(names) / 2
	left, err := renderSplit(render, names[:half])
	if err != nil {
		return nil, err
	}
	right, err := renderSplit(render, names[half:])
	if err != nil {
		return nil, err
	}
	return append(left, right...), nil
}

// nameBytes is what one name adds to a names matcher: its regex-escaped, string-quoted bytes
// and the "|" before it.
func nameBytes(name string) int {
	return len(quoteInner(regexp.QuoteMeta(name))) + 1
}

// chunkBudget estimates how many bytes of names (nameBytes) one query within c's limit may
// carry: the rendered length is taken as linear in them, fitted on the first two names and on
// all of them. The estimate only sizes the chunks; renderSplit checks each one. 0 means no
// estimate (every chunk then starts as one name too many and is halved).
func chunkBudget(c *compiledQuery, render func(*compiledQuery, []string) (string, error), names []string) int {
	unbounded := *c
	unbounded.maxBytes = math.MaxInt
	size := func(ns []string) (length, nameLen int, ok bool) {
		q, err := render(&unbounded, ns)
		if err != nil {
			return 0, 0, false
		}
		for _, n := range ns {
			nameLen += nameBytes(n)
		}
		return len(q), nameLen, true
	}
	lAll, wAll, okAll := size(names)
	l2, w2, ok2 := size(names[:2])
	if !okAll || !ok2 || wAll <= w2 || lAll <= l2 {
		return 0
	}
	perByte := float64(lAll-l2) / float64(wAll-w2)
	base := float64(l2) - perByte*float64(w2)
	return max(0, int((float64(c.maxBytes)-base)/perByte))
}

// packNames splits names, in order, into chunks of at most budget bytes (nameBytes) each; a
// chunk holds at least one name. Without a budget (0) it is one chunk.
func packNames(names []string, budget int) [][]string {
	if budget <= 0 {
		return [][]string{names}
	}
	var out [][]string
	start, used := 0, 0
	for i, n := range names {
		b := nameBytes(n)
		if i > start && used+b > budget {
			out = append(out, names[start:i])
			start, used = i, 0
		}
		used += b
	}
	return append(out, names[start:])
}
