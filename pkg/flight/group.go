package flight

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// ErrInvalidPolicy means a Policy field is out of range.
var ErrInvalidPolicy = errors.New("invalid sharing policy")

// ErrPanicked means a call panicked: it runs on a goroutine of its own, where a panic would
// take the process down, so it is the call's error instead, logged with its stack.
var ErrPanicked = errors.New("the call panicked")

// Policy states what a Group may reuse, and for how long. The zero Policy shares only the calls
// in flight: every caller that comes after a call finished makes a new one.
type Policy struct {
	// MaxAge is how long a finished answer is reused, counted from when its call started (so an
	// answer is never more than MaxAge behind its source); 0 reuses no finished answer.
	MaxAge time.Duration
	// KeepErrors reuses a failed answer for MaxAge too; false shares a failure only among the
	// callers that were waiting for it, and the next caller calls again.
	KeepErrors bool
	// Timeout bounds one call, which runs detached from the cancellation of any one caller since
	// others may wait for it; 0 leaves the call to its own bounds.
	Timeout time.Duration
	// MaxEntries bounds the finished answers kept; past it the oldest is dropped. 0 means 4096.
	MaxEntries int
}

// defaultMaxEntries is MaxEntries when it is left 0.
const defaultMaxEntries = 4096

// Validate returns the problems with p.
func (p Policy) Validate() error {
	if p.MaxAge < 0 || p.Timeout < 0 || p.MaxEntries < 0 {
		return fmt.Errorf("max age %s, timeout %s, max entries %d must not be negative: %w", p.MaxAge, p.Timeout, p.MaxEntries, ErrInvalidPolicy)
	}
	return nil
}

// Answer is a value with the time its call started: the data is no older than that.
type Answer[V any] struct {
	// Value is the call's result.
	Value V
	// Asked is when the call that produced Value started.
	Asked time.Time
	// Served says how the caller was answered; set even when its wait ended first.
	Served Served
}

// Served says how a Get was answered.
type Served int

const (
	// Called means the caller started the call.
	Called Served = iota
	// Joined means the caller waited for a call in flight that another started.
	Joined
	// Reused means the caller got a finished answer the policy lets it reuse.
	Reused
)

// Group shares calls per key under one Policy. It is safe for concurrent use.
type Group[K comparable, V any] struct {
	clock  clock.PassiveClock
	policy Policy

	mu        sync.Mutex
	entries   map[K]*call[V]
	lastSweep time.Time
}

// call is one call: in progress until done is closed, then its result.
type call[V any] struct {
	done     chan struct{}
	started  time.Time
	finished bool // under Group.mu
	val      V
	err      error
}

// New returns a Group under p, timed by clk (nil means the real clock).
func New[K comparable, V any](clk clock.PassiveClock, p Policy) (*Group[K, V], error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	if p.MaxEntries == 0 {
		p.MaxEntries = defaultMaxEntries
	}
	return &Group[K, V]{clock: clk, policy: p, entries: map[K]*call[V]{}}, nil
}

// Policy returns the group's policy, its defaults applied.
func (g *Group[K, V]) Policy() Policy { return g.policy }

// Get returns the answer for key: the call in flight, a finished answer the policy lets it
// reuse, or a new call of fetch. A caller whose ctx ends stops waiting; the call goes on for the
// others, bounded by the policy's Timeout.
func (g *Group[K, V]) Get(ctx context.Context, key K, fetch func(context.Context) (V, error)) (Answer[V], error) {
	return g.Ask(ctx, key, true, fetch).Wait(ctx)
}

// Start makes sure an answer for key is coming without waiting for it: it starts a call of fetch
// unless one is in flight or a finished answer is reusable. The call runs detached from ctx's
// cancellation, bounded by the policy's Timeout; a later Get shares or reuses it.
func (g *Group[K, V]) Start(ctx context.Context, key K, fetch func(context.Context) (V, error)) {
	g.Ask(ctx, key, true, fetch)
}

// Ask finds the call in flight for key or, when reuse is set, a finished answer the policy lets
// it reuse, or starts a call of fetch, and returns at once: how the caller is served is known
// before it waits (Pending.Wait). Without reuse, a finished answer is not taken, but the new
// call's answer may be reused by later callers.
func (g *Group[K, V]) Ask(ctx context.Context, key K, reuse bool, fetch func(context.Context) (V, error)) Pending[V] {
	c, served := g.lookup(ctx, key, reuse, fetch)
	return Pending[V]{c: c, Served: served}
}

// Pending is an answer asked for and not yet waited for.
type Pending[V any] struct {
	c *call[V]
	// Served says how the answer is served.
	Served Served
}

// Done reports whether the answer is in: Wait then returns it at once, whatever its ctx.
func (p Pending[V]) Done() bool {
	select {
	case <-p.c.done:
		return true
	default:
		return false
	}
}

// Wait waits for the answer until ctx ends; the call goes on for the others. An answer already
// in is returned even when ctx has ended.
func (p Pending[V]) Wait(ctx context.Context) (Answer[V], error) {
	if p.Done() {
		return Answer[V]{Value: p.c.val, Asked: p.c.started, Served: p.Served}, p.c.err
	}
	select {
	case <-p.c.done:
		return Answer[V]{Value: p.c.val, Asked: p.c.started, Served: p.Served}, p.c.err
	case <-ctx.Done():
		return Answer[V]{Served: p.Served}, ctx.Err()
	}
}

// lookup finds the call in flight or, when reuse is set, a reusable answer for key, or starts a
// call.
func (g *Group[K, V]) lookup(ctx context.Context, key K, reuse bool, fetch func(context.Context) (V, error)) (*call[V], Served) {
	now := g.clock.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if c, ok := g.entries[key]; ok {
		if !c.finished {
			return c, Joined
		}
		if reuse && g.reusable(c, now) {
			return c, Reused
		}
	}
	delete(g.entries, key)
	g.sweep(now)
	g.evict(now)
	c := &call[V]{done: make(chan struct{}), started: now}
	g.entries[key] = c
	go g.run(context.WithoutCancel(ctx), key, c, fetch)
	return c, Called
}

// run calls fetch for c, drops c at once unless the policy may reuse it, and wakes its waiters.
func (g *Group[K, V]) run(ctx context.Context, key K, c *call[V], fetch func(context.Context) (V, error)) {
	if g.policy.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, g.policy.Timeout)
		defer cancel()
	}
	val, err := Recovering(ctx, fetch)
	g.mu.Lock()
	c.val, c.err, c.finished = val, err, true
	if g.entries[key] == c && !g.reusable(c, c.started) {
		delete(g.entries, key)
	}
	g.mu.Unlock()
	close(c.done)
}

// Recovering calls fetch, and turns a panic in it into an error wrapping ErrPanicked: for a
// call on a goroutine of its own, where a panic would end the process.
func Recovering[V any](ctx context.Context, fetch func(context.Context) (V, error)) (val V, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrPanicked, r)
			klog.FromContext(ctx).Error(err, "A shared call panicked; its callers get the error", "stack", string(debug.Stack()))
		}
	}()
	return fetch(ctx)
}

// reusable reports whether the finished call c may answer a caller at now. g.mu is held.
func (g *Group[K, V]) reusable(c *call[V], now time.Time) bool {
	return (c.err == nil || g.policy.KeepErrors) && now.Sub(c.started) < g.policy.MaxAge
}

// sweep drops the finished answers no longer reusable, at most once per MaxAge, so that what a
// key no caller asks for again is not held. g.mu is held.
func (g *Group[K, V]) sweep(now time.Time) {
	if g.policy.MaxAge == 0 || now.Sub(g.lastSweep) < g.policy.MaxAge {
		return
	}
	g.lastSweep = now
	g.dropStale(now)
}

// dropStale drops the finished answers no longer reusable at now. g.mu is held.
func (g *Group[K, V]) dropStale(now time.Time) {
	for k, c := range g.entries {
		if c.finished && !g.reusable(c, now) {
			delete(g.entries, k)
		}
	}
}

// evict makes room for one entry: it drops the answers no longer reusable and then, while still
// full, the oldest finished one. Calls in flight stay. g.mu is held.
func (g *Group[K, V]) evict(now time.Time) {
	if len(g.entries) < g.policy.MaxEntries {
		return
	}
	g.dropStale(now)
	for len(g.entries) >= g.policy.MaxEntries {
		var oldest K
		var at time.Time
		found := false
		for k, c := range g.entries {
			if c.finished && (!found || c.started.Before(at)) {
				oldest, at, found = k, c.started, true
			}
		}
		if !found {
			return
		}
		delete(g.entries, oldest)
	}
}
