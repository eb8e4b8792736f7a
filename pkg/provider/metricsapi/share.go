package metricsapi

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/flight"
)

// maxSharedAnswers bounds how many answers sharedQueries holds; past it, the oldest finished one
// is dropped.
const maxSharedAnswers = 10000

// How a query was answered, as counted by podpilot_metrics_query_requests_total.
const (
	servedByPrometheus = "prometheus" // this request sent the query
	servedByInFlight   = "in_flight"  // it waited for the same query sent by another request
	servedByCache      = "cache"      // it reused a finished answer younger than the max age
)

// sharedQueries lets requests for the same query share one call to Prometheus, on pkg/flight's
// policy: concurrent requests wait for the call in flight, and later ones reuse its answer while
// it is younger than maxAge (timed from when the call started), so an answer is never more than
// maxAge behind Prometheus. A failed call is shared only by the requests waiting for it, never
// kept. Answers are keyed by backend, tenant and query (one per namespace and metric: requests
// ask for whole namespaces and filter in memory; an answer read with one tenant never serves
// another) and hold no per-object state; they are dropped once stale.
// A maxAge of 0 turns sharing off. Values are shared among requests and must not be modified.
type sharedQueries[V any] struct {
	// group is nil when sharing is off.
	group *flight.Group[string, V]
	count func(backend, servedBy string)
}

func newSharedQueries[V any](clk clock.PassiveClock, maxAge time.Duration, count func(backend, servedBy string)) (*sharedQueries[V], error) {
	c := &sharedQueries[V]{count: count}
	if maxAge <= 0 {
		return c, nil
	}
	g, err := flight.New[string, V](clk, flight.Policy{MaxAge: maxAge, MaxEntries: maxSharedAnswers})
	if err != nil {
		return nil, fmt.Errorf("share Prometheus answers: %w", err)
	}
	c.group = g
	return c, nil
}

// enabled reports whether answers are shared at all.
func (c *sharedQueries[V]) enabled() bool { return c.group != nil }

// get returns the answer for key (which names backend and tenant) from backend: in flight, fresh (when reuse is set), or from a new call of
// fetch, which is then kept for later requests. fetch runs detached from the cancellation of
// ctx, since other requests may wait for it (the Prometheus client bounds it with its timeout);
// a request whose ctx ends stops waiting.
func (c *sharedQueries[V]) get(ctx context.Context, backend, key string, reuse bool, fetch func(context.Context) (V, error)) (V, error) {
	if !c.enabled() {
		c.count(backend, servedByPrometheus)
		return fetch(ctx)
	}
	p := c.group.Ask(ctx, key, reuse, fetch)
	switch p.Served {
	case flight.Joined:
		c.count(backend, servedByInFlight)
	case flight.Reused:
		c.count(backend, servedByCache)
	default:
		c.count(backend, servedByPrometheus)
	}
	a, err := p.Wait(ctx)
	return a.Value, err
}
