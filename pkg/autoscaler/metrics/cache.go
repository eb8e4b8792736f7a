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
	retention  time.Duration
	maxEntries int
	timeout    time.Duration
}

// cachingOf defaults the settings left zero: the real clock, DefaultFreshness, DefaultMaxEntries
// and DefaultTimeout. A negative setting is an ErrInvalidConfig.
func cachingOf(clk clock.PassiveClock, freshness time.Duration, maxEntries int, timeout time.Duration) (caching, error) {
	if freshness < 0 || maxEntries < 0 || timeout < 0 {
		return caching{}, fmt.Errorf("freshness %s, max entries %d, timeout %s: %w", freshness, maxEntries, timeout, ErrInvalidConfig)
	}
	c := caching{clock: clk, freshness: freshness, retention: freshness, maxEntries: maxEntries, timeout: timeout}
	if c.clock == nil {
		c.clock = clock.RealClock{}
	}
	if c.freshness == 0 {
		c.freshness, c.retention = DefaultFreshness, DefaultFreshness
	}
	if c.maxEntries == 0 {
		c.maxEntries = DefaultMaxEntries
	}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	return c, nil
}

// withRetention returns c keeping finished answers for d (at least the freshness), for the
// readers whose rounds fell due before the answer was asked (see cache.get).
func (c caching) withRetention(d time.Duration) (caching, error) {
	if d < 0 {
		return caching{}, fmt.Errorf("retention %s: %w", d, ErrInvalidConfig)
	}
	if d == 0 {
		d = DefaultRetentionRounds * c.freshness
	}
	c.retention = max(d, c.freshness)
	return c, nil
}

// policy is the autoscaler's rule for keeping answers: a finished answer is kept for the
// retention (counted from when it was asked) and each reader takes it or not by its own round
// (see cache.get); a failure is never reused, so a source that recovers is read at the next
// call; a call is bounded by the timeout.
func (c caching) policy() flight.Policy {
	return flight.Policy{MaxAge: c.retention, KeepErrors: false, Timeout: c.timeout, MaxEntries: c.maxEntries}
}

// cache shares one call per key under the autoscaler's policy (see caching.policy), each reader
// taking an answer fresh enough for its round (see cache.get).
type cache[K comparable, V any] struct {
	group     *flight.Group[K, V]
	clock     clock.PassiveClock
	freshness time.Duration
}

// newCacheOf returns a cache with the settings c.
func newCacheOf[K comparable, V any](c caching) (*cache[K, V], error) {
	g, err := flight.New[K, V](c.clock, c.policy())
	if err != nil {
		return nil, fmt.Errorf("metrics cache: %w: %w", ErrInvalidConfig, err)
	}
	return &cache[K, V]{group: g, clock: c.clock, freshness: c.freshness}, nil
}

// get returns the in-flight or a fresh enough result for key, or starts fetch for it. fetch runs
// detached from the cancellation of ctx, bounded by the timeout, since other callers may share
// it; a caller whose ctx ends stops waiting. A finished answer is fresh enough when it was asked
// less than the freshness before the reader's round fell due (see oldestFor); otherwise the
// reader asks anew, and its answer serves the readers after it.
func (c *cache[K, V]) get(ctx context.Context, key K, fetch func(context.Context) (V, error)) (V, error) {
	a, err := c.group.Get(ctx, key, fetch)
	if a.Served == flight.Reused && !a.Asked.After(c.oldestFor(ctx)) {
		a, err = c.group.Ask(ctx, key, false, fetch).Wait(ctx)
	}
	return a.Value, err
}

// oldestFor returns the time a reader with ctx needs an answer asked after: the freshness (its
// own, WithFreshness, when shorter) before its round fell due (WithRoundDue), or before now. A
// round that waited in the queue behind others thereby takes the answer an earlier round of its
// namespace asked after it fell due, as it would have had it run on time: the calls stay one per
// distinct query and round however long the queue, instead of one per PodAutoscaler once the
// wait outgrows the freshness.
func (c *cache[K, V]) oldestFor(ctx context.Context) time.Time {
	d := c.freshness
	if own, ok := freshnessFrom(ctx); ok && own < d {
		d = own
	}
	due := c.clock.Now()
	if at, ok := ctx.Value(roundDueKey{}).(time.Time); ok && at.Before(due) {
		due = at
	}
	return due.Add(-d)
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

// roundDueKey is the context key of WithRoundDue.
type roundDueKey struct{}

// WithRoundDue returns ctx for the reads of a round that fell due at due: they take an answer
// asked after the freshness before due, as long as the Fetcher keeps it (FetcherConfig.Retention),
// rather than before now. Without it a read is due when it is made.
func WithRoundDue(ctx context.Context, due time.Time) context.Context {
	return context.WithValue(ctx, roundDueKey{}, due)
}
