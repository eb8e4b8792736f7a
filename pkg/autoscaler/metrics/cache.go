package metrics

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// flight is one call to a source: in progress until done is closed, then its result.
type flight[V any] struct {
	done     chan struct{}
	started  time.Time
	finished bool
	val      V
	err      error
}

// cache shares one call per key among concurrent callers and reuses its result, errors
// included, for ttl after the call started. It holds at most size finished entries.
type cache[K comparable, V any] struct {
	clock   clock.PassiveClock
	ttl     time.Duration
	timeout time.Duration
	size    int

	mu      sync.Mutex
	entries map[K]*flight[V]
}

func newCache[K comparable, V any](clk clock.PassiveClock, ttl, timeout time.Duration, size int) *cache[K, V] {
	return &cache[K, V]{clock: clk, ttl: ttl, timeout: timeout, size: size, entries: map[K]*flight[V]{}}
}

// get returns the fresh or in-flight result for key, or starts fetch for it. fetch runs detached
// from the cancellation of ctx, bounded by the cache's timeout, since other callers may share it;
// a caller whose ctx ends stops waiting.
func (c *cache[K, V]) get(ctx context.Context, key K, fetch func(context.Context) (V, error)) (V, error) {
	now := c.clock.Now()
	c.mu.Lock()
	f, ok := c.entries[key]
	if !ok || (f.finished && !now.Before(f.started.Add(c.ttl))) {
		f = &flight[V]{done: make(chan struct{}), started: now}
		c.evict(now)
		c.entries[key] = f
		go c.run(ctx, f, fetch)
	}
	c.mu.Unlock()

	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

func (c *cache[K, V]) run(ctx context.Context, f *flight[V], fetch func(context.Context) (V, error)) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.timeout)
	defer cancel()
	val, err := fetch(fctx)
	c.mu.Lock()
	f.val, f.err, f.finished = val, err, true
	c.mu.Unlock()
	close(f.done)
}

// evict makes room for one entry: it drops expired entries and then, while still full, the
// oldest finished one. In-flight entries stay. The caller holds mu.
func (c *cache[K, V]) evict(now time.Time) {
	if len(c.entries) < c.size {
		return
	}
	for k, f := range c.entries {
		if f.finished && !now.Before(f.started.Add(c.ttl)) {
			delete(c.entries, k)
		}
	}
	for len(c.entries) >= c.size {
		var oldest K
		var found bool
		var at time.Time
		for k, f := range c.entries {
			if f.finished && (!found || f.started.Before(at)) {
				oldest, at, found = k, f.started, true
			}
		}
		if !found {
			return
		}
		delete(c.entries, oldest)
	}
}
