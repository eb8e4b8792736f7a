package metricsapi

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// maxSharedAnswers bounds how many answers sharedQueries holds; past it, new queries go unshared
// until stale answers are dropped.
const maxSharedAnswers = 10000

// How a query was answered, as counted by podpilot_metrics_query_requests_total.
const (
	servedByPrometheus = "prometheus" // this request sent the query
	servedByInFlight   = "in_flight"  // it waited for the same query sent by another request
	servedByCache      = "cache"      // it reused a finished answer younger than the max age
)

// sharedAnswer is one query to Prometheus: in flight until done is closed, then its result.
type sharedAnswer[V any] struct {
	done     chan struct{}
	started  time.Time
	finished bool // under sharedQueries.mu
	val      V
	err      error
}

// sharedQueries lets requests for the same query share one call to Prometheus: concurrent
// requests wait for the call in flight, and later ones reuse its answer while it is younger than
// maxAge (timed from when the call started), so an answer is never more than maxAge behind
// Prometheus. A failed call is shared only by the requests waiting for it, never kept. Answers
// are keyed by query (one per namespace and metric: requests ask for whole namespaces and filter
// in memory) and hold no per-object state; they are dropped once stale. A maxAge of 0 turns
// sharing off. Values are shared among requests and must not be modified.
type sharedQueries[V any] struct {
	clock  clock.PassiveClock
	maxAge time.Duration
	count  func(servedBy string)

	mu        sync.Mutex
	answers   map[string]*sharedAnswer[V]
	lastSweep time.Time
}

func newSharedQueries[V any](clk clock.PassiveClock, maxAge time.Duration, count func(string)) *sharedQueries[V] {
	return &sharedQueries[V]{clock: clk, maxAge: maxAge, count: count, answers: map[string]*sharedAnswer[V]{}}
}

// enabled reports whether answers are shared at all.
func (c *sharedQueries[V]) enabled() bool { return c.maxAge > 0 }

// get returns the answer for key: in flight, fresh (when reuse is set), or from a new call of
// fetch, which is then kept for later requests. fetch runs detached from the cancellation of
// ctx, since other requests may wait for it (the Prometheus client bounds it with its timeout);
// a request whose ctx ends stops waiting.
func (c *sharedQueries[V]) get(ctx context.Context, key string, reuse bool, fetch func(context.Context) (V, error)) (V, error) {
	if !c.enabled() {
		c.count(servedByPrometheus)
		return fetch(ctx)
	}
	a, servedBy := c.lookup(ctx, key, reuse, fetch)
	c.count(servedBy)
	select {
	case <-a.done:
		return a.val, a.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// lookup finds the in-flight or (if reuse) fresh answer for key, or starts a call.
func (c *sharedQueries[V]) lookup(ctx context.Context, key string, reuse bool, fetch func(context.Context) (V, error)) (*sharedAnswer[V], string) {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.answers[key]; ok {
		if !a.finished {
			return a, servedByInFlight
		}
		if reuse && c.fresh(a, now) {
			return a, servedByCache
		}
		delete(c.answers, key)
	}
	c.sweep(now)
	a := &sharedAnswer[V]{done: make(chan struct{}), started: now}
	if len(c.answers) < maxSharedAnswers {
		c.answers[key] = a
	}
	go c.run(context.WithoutCancel(ctx), key, a, fetch)
	return a, servedByPrometheus
}

// run calls fetch for a, keeps a only if it succeeded, and wakes its waiters.
func (c *sharedQueries[V]) run(ctx context.Context, key string, a *sharedAnswer[V], fetch func(context.Context) (V, error)) {
	val, err := fetch(ctx)
	c.mu.Lock()
	a.val, a.err, a.finished = val, err, true
	if err != nil && c.answers[key] == a {
		delete(c.answers, key)
	}
	c.mu.Unlock()
	close(a.done)
}

// fresh reports whether a finished answer may still be served at now.
func (c *sharedQueries[V]) fresh(a *sharedAnswer[V], now time.Time) bool {
	return a.err == nil && now.Sub(a.started) < c.maxAge
}

// sweep drops stale answers, at most once per maxAge; c.mu must be held.
func (c *sharedQueries[V]) sweep(now time.Time) {
	if now.Sub(c.lastSweep) < c.maxAge {
		return
	}
	c.lastSweep = now
	for key, a := range c.answers {
		if a.finished && !c.fresh(a, now) {
			delete(c.answers, key)
		}
	}
}
