package metrics

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/flight"
)

// caching is the settings of this package's caches, which FetcherConfig and ScrapeTrackerConfig
// share.
type caching struct {
	clock      clock.PassiveClock
	freshness  time.Duration
	maxEntries int
	timeout    time.Duration
}

// cachingOf defaults the settings left zero: the real clock, DefaultFreshness, DefaultMaxEntries
// and DefaultTimeout. A negative setting is an ErrInvalidConfig.
func cachingOf(clk clock.PassiveClock, freshness time.Duration, maxEntries int, timeout time.Duration) (caching, error) {
	if freshness < 0 || maxEntries < 0 || timeout < 0 {
		return caching{}, fmt.Errorf("freshness %s, max entries %d, timeout %s: %w", freshness, maxEntries, timeout, ErrInvalidConfig)
	}
	c := caching{clock: clk, freshness: freshness, maxEntries: maxEntries, timeout: timeout}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.freshness == 0 {
		c.freshness = DefaultFreshness
	}
	if c.maxEntries == 0 {
		c.maxEntries = DefaultMaxEntries
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// policy is the autoscaler's rule for reusing an answer: an answer is reused until it is
// freshness old (counted from when it was asked), so autoscalers due in the same round share one
// call and the next round asks anew; a failure is never reused, so a source that recovers is read
// at the next call; a call is bounded by the timeout.
func (c caching) policy() flight.Policy {
	return flight.Policy{MaxAge: c.freshness, KeepErrors: false, Timeout: c.timeout, MaxEntries: c.maxEntries}
}

// cache shares one call per key under the autoscaler's policy (see caching.policy).
type cache[K comparable, V any] struct {
	group *flight.Group[K, V]
	clock clock.PassiveClock
}

// newCacheOf returns a cache with the settings c.
func newCacheOf[K comparable, V any](c caching) (*cache[K, V], error) {
	g, err := flight.New[K, V](c.clock, c.policy())
	if err != nil {
		return nil, fmt.Errorf("metrics cache: %w: %w", ErrInvalidConfig, err)
	}
	return &cache[K, V]{group: g, clock: c.clock}, nil
}

// get returns the in-flight or fresh result for key, or starts fetch for it. fetch runs detached
// from the cancellation of ctx, bounded by the timeout, since other callers may share it; a
// caller whose ctx ends stops waiting. A finished answer older than the freshness ctx carries
// (WithFreshness) is not taken: the caller asks anew, and its answer serves the callers after it.
func (c *cache[K, V]) get(ctx context.Context, key K, fetch func(context.Context) (V, error)) (V, error) {
	a, err := c.group.Get(ctx, key, fetch)
	if d, ok := freshnessFrom(ctx); ok && a.Served == flight.Reused && c.clock.Since(a.Asked) >= d {
		a, err = c.group.Ask(ctx, key, false, fetch).Wait(ctx)
	}
	return a.Value, err
}

// freshnessKey is the context key of WithFreshness.
type freshnessKey struct{}

// WithFreshness returns ctx for reads that take a finished answer only while it is younger than
// d, when d is shorter than the Fetcher's Freshness: a PodAutoscaler whose own sync period
// (spec.behavior.syncPeriodSeconds) is shorter than the controller's reads at half its period.
// Its reads still join a call in flight and leave their answers to the readers after them, so
// the calls stay one per distinct query, at the pace of its most frequent reader.
func WithFreshness(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, freshnessKey{}, d)
}

// freshnessFrom returns the freshness WithFreshness put in ctx.
func freshnessFrom(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(freshnessKey{}).(time.Duration)
	return d, ok
}
