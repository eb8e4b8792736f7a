package prediction

import (
	"sync"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
)

// DefaultMaxModels is how many histories (distinct namespace, metric and selector) the
// forecast holds a model of, by default: see docs/predictive-scaling.md for the memory each takes.
const DefaultMaxModels = 1000

// CacheSize is the size of the model cache: its entries and about how many bytes they hold.
type CacheSize struct {
	Entries int
	Bytes   int64
}

// modelCache holds, per key, the history last read (so that a refit reads only the values since)
// and its fit. Its policy: at most maxEntries keys; past that the least recently used (asked for
// by a round, or kept by a refit) is evicted, and refitted in the background at its next round;
// a key no refit kept for three refreshes is dropped. The history is held in float32, half the
// bytes of float64 and far finer than the loads it holds vary.
type modelCache struct {
	refresh    time.Duration
	maxEntries int
	observe    func(CacheSize)

	mu      sync.Mutex
	entries map[modelKey]*heldHistory
	clock   uint64 // counts uses, for the least recently used
	bytes   int64
}

// heldHistory is the history last read for a key, when, what its fit made of it, and when a
// round last used it.
type heldHistory struct {
	start  time.Time
	values []float32
	read   time.Time
	fit    Fit
	used   uint64
}

// size is about how many bytes h holds.
func (h *heldHistory) size() int64 {
	const overhead = 256 // the entry, its key's strings, the map slot
	return overhead + 4*int64(cap(h.values)) + h.fit.model.Bytes()
}

// newModelCache returns an empty cache of at most maxEntries keys (DefaultMaxModels when
// 0 or less).
func newModelCache(refresh time.Duration, maxEntries int, observe func(CacheSize)) *modelCache {
	if maxEntries <= 0 {
		maxEntries = DefaultMaxModels
	}
	return &modelCache{refresh: refresh, maxEntries: maxEntries, observe: observe, entries: map[modelKey]*heldHistory{}}
}

// use returns key's fit and marks it used.
func (c *modelCache) use(key modelKey) (Fit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.entries[key]
	if !ok {
		return Fit{}, false
	}
	c.clock++
	h.used = c.clock
	return h.fit, true
}

// fresh returns key's fit if it is not due at now.
func (c *modelCache) fresh(key modelKey, now time.Time) (Fit, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.entries[key]
	if !ok || !now.Before(h.fit.due) {
		return Fit{}, false
	}
	return h.fit, true
}

// heldFrom returns the history held for key from start on, without its last historyOverlap, or
// an empty series at start when none is held that reaches that far.
func (c *modelCache) heldFrom(key modelKey, start, end time.Time) forecast.Series {
	empty := forecast.Series{Start: start, Step: historyStep}
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.entries[key]
	if !ok {
		return empty
	}
	heldEnd := h.start.Add(time.Duration(len(h.values)) * historyStep)
	if h.start.After(start) || heldEnd.After(end.Add(historyStep)) {
		return empty
	}
	skip := int(start.Sub(h.start) / historyStep)
	keep := len(h.values) - int(historyOverlap/historyStep)
	if skip >= keep {
		return empty
	}
	values := make([]float64, keep-skip, len(h.values)-skip+int(c.refresh/historyStep))
	for i, v := range h.values[skip:keep] {
		values[i] = float64(v)
	}
	return forecast.Series{Start: start, Step: historyStep, Values: values}
}

// keep holds s and its fit f as key's, read at now; drops the keys no refit kept for three
// refreshes, then the least recently used while more than maxEntries are held.
func (c *modelCache) keep(key modelKey, s forecast.Series, f Fit, now time.Time) {
	h := &heldHistory{start: s.Start, values: make([]float32, len(s.Values)), read: now, fit: f}
	for i, v := range s.Values {
		h.values[i] = float32(v)
	}
	c.mu.Lock()
	c.clock++
	h.used = c.clock
	if old, ok := c.entries[key]; ok {
		c.bytes -= old.size()
	}
	c.entries[key], c.bytes = h, c.bytes+h.size()
	for k, old := range c.entries {
		if now.Sub(old.read) > 3*c.refresh {
			c.drop(k)
		}
	}
	for len(c.entries) > c.maxEntries {
		c.drop(c.leastRecentlyUsed())
	}
	size := CacheSize{Entries: len(c.entries), Bytes: c.bytes}
	c.mu.Unlock()
	if c.observe != nil {
		c.observe(size)
	}
}

// leastRecentlyUsed is the key used least recently. c.mu is held.
func (c *modelCache) leastRecentlyUsed() modelKey {
	var lru modelKey
	oldest := ^uint64(0)
	for k, h := range c.entries {
		if h.used < oldest {
			lru, oldest = k, h.used
		}
	}
	return lru
}

// drop forgets key. c.mu is held.
func (c *modelCache) drop(key modelKey) {
	if h, ok := c.entries[key]; ok {
		c.bytes -= h.size()
		delete(c.entries, key)
	}
}

// size returns the cache's size.
func (c *modelCache) size() CacheSize {
	c.mu.Lock()
	defer c.mu.Unlock()
	return CacheSize{Entries: len(c.entries), Bytes: c.bytes}
}
