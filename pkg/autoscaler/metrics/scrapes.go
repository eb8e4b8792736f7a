package metrics

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// Defaults of ScrapeTrackerConfig.
const (
	// DefaultScrapeRefresh is how often a learnt cadence is checked against Prometheus again.
	DefaultScrapeRefresh = 2 * time.Minute
	// MinScrapeInterval is the smallest gap between two landings taken as a scrape interval;
	// smaller gaps (series of several targets) are not a cadence.
	MinScrapeInterval = time.Second
	// scrapePhaseTolerance is how far a landing may stray from the learnt grid before the
	// cadence is learnt anew (a restarted Prometheus picks new scrape offsets).
	scrapePhaseTolerance = 250 * time.Millisecond
)

// SampleTimeSource tells when the newest raw sample behind a custom or external metric landed in
// its store. podpilot's Prometheus provider satisfies it in-process.
type SampleTimeSource interface {
	// LastSample returns the time of the newest raw sample behind metric info for the objects of
	// namespace matching metricSelector; the zero time means there is none.
	LastSample(ctx context.Context, namespace string, info provider.CustomMetricInfo, metricSelector labels.Selector) (time.Time, error)
	// LastExternalSample is LastSample for an external metric read in namespace.
	LastExternalSample(ctx context.Context, namespace string, metricSelector labels.Selector, info provider.ExternalMetricInfo) (time.Time, error)
}

// Cadence is when the data behind a metric lands: Last is the newest landing seen and Interval
// the scrape interval (or a multiple of it) learnt from successive landings; 0 while unknown.
type Cadence struct {
	Last     time.Time
	Interval time.Duration
}

// Known reports whether the cadence can place rounds.
func (c Cadence) Known() bool { return c.Interval >= MinScrapeInterval && !c.Last.IsZero() }

// Next returns the time of the next round of an autoscaler with the given sync period so that it
// runs margin after a landing: the point of the landing grid nearest to now+period, never
// earlier than now+minGap. Rounds keep the sync period on average, each within half a grid step
// of it. A scrape interval longer than the period is divided into the fewest equal steps not
// longer than the period, so one round in every few still follows each landing. Without a known
// cadence, or one that stopped (no landing for two refreshes and five intervals), it returns
// now+period and false.
func (c Cadence) Next(now time.Time, period, margin, minGap, refresh time.Duration) (time.Time, bool) {
	regular := now.Add(period)
	if !c.Known() || period <= 0 || now.Sub(c.Last) > 2*refresh+5*c.Interval {
		return regular, false
	}
	step := c.Interval
	if step > period {
		step /= time.Duration(math.Ceil(float64(step) / float64(period)))
	}
	base := c.Last.Add(margin)
	k := math.Round(float64(regular.Sub(base)) / float64(step))
	next := base.Add(time.Duration(k) * step)
	for next.Before(now.Add(minGap)) {
		next = next.Add(step)
	}
	return next, true
}

// observe updates c with a landing seen at t. A later landing on the grid keeps the interval
// (or refines it to a smaller gap); one off the grid starts learning again.
func (c Cadence) observe(t time.Time) Cadence {
	if t.IsZero() || !t.After(c.Last) {
		return c
	}
	if c.Last.IsZero() {
		return Cadence{Last: t}
	}
	gap := t.Sub(c.Last)
	switch {
	case c.Interval == 0 && gap >= MinScrapeInterval:
		return Cadence{Last: t, Interval: gap}
	case c.Interval == 0:
		return Cadence{Last: t}
	}
	off := gap % c.Interval
	if off > scrapePhaseTolerance && c.Interval-off > scrapePhaseTolerance {
		if gap >= MinScrapeInterval && gap < c.Interval && c.Interval%gap <= scrapePhaseTolerance {
			return Cadence{Last: t, Interval: gap} // a divisor: the interval was a multiple
		}
		return Cadence{Last: t} // off the grid: learn again
	}
	return Cadence{Last: t, Interval: c.Interval}
}

// ScrapeTrackerConfig is everything NewScrapeTracker needs.
type ScrapeTrackerConfig struct {
	// Source tells when samples landed; required.
	Source SampleTimeSource
	// Clock times the refreshes; nil means the real clock.
	Clock clock.PassiveClock
	// Refresh is how often a known cadence is checked again; 0 means DefaultScrapeRefresh. While
	// a cadence is being learnt it is checked at every call, at most once per Freshness.
	Refresh time.Duration
	// Freshness is how long one answer of Source is shared; 0 means DefaultFreshness.
	Freshness time.Duration
	// MaxEntries bounds the tracked (namespace, metric, selector) keys; 0 means DefaultMaxEntries.
	MaxEntries int
	// Timeout bounds one call to Source; 0 means DefaultTimeout.
	Timeout time.Duration
}

// ScrapeTracker learns, per namespace, metric and selector, when the data behind a custom metric
// lands, from a few small queries: one per key per call while the cadence is being learnt, then
// one per key per refresh. Its cost grows with the distinct keys, never with the autoscalers.
// Answers of the source are shared under the same policy as the Fetcher's (see caching.policy).
// It is safe for concurrent use.
type ScrapeTracker struct {
	src     SampleTimeSource
	clock   clock.PassiveClock
	refresh time.Duration
	max     int
	answers *cache[landingKey, time.Time]

	checks sync.WaitGroup

	mu      sync.Mutex
	entries map[landingKey]trackedCadence
}

// trackedCadence is a key's cadence, when it was last checked, and whether a check started by
// Known is under way.
type trackedCadence struct {
	cadence  Cadence
	checked  time.Time
	checking bool
}

// NewScrapeTracker returns a ScrapeTracker over cfg.Source.
func NewScrapeTracker(cfg ScrapeTrackerConfig) (*ScrapeTracker, error) {
	if cfg.Source == nil || cfg.Refresh < 0 {
		return nil, fmt.Errorf("scrape tracker needs a source and a non-negative refresh: %w", ErrInvalidConfig)
	}
	cs, err := cachingOf(cfg.Clock, cfg.Freshness, cfg.MaxEntries, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("scrape tracker: %w", err)
	}
	if cfg.Refresh == 0 {
		cfg.Refresh = DefaultScrapeRefresh
	}
	answers, err := newCacheOf[landingKey, time.Time](cs)
	if err != nil {
		return nil, fmt.Errorf("scrape tracker: %w", err)
	}
	return &ScrapeTracker{
		src: cfg.Source, clock: cs.clock, refresh: cfg.Refresh, max: cs.maxEntries,
		answers: answers, entries: map[landingKey]trackedCadence{},
	}, nil
}

// Refresh is how often a known cadence is checked again.
func (s *ScrapeTracker) Refresh() time.Duration { return s.refresh }

// landingKey identifies the series one cadence is learnt for: a metric (of the pods, of the
// objects of one kind, or external) in a namespace, narrowed by a metric selector.
type landingKey struct {
	source, namespace, group, kind, metric, selector string
}

// Landing names the series one cadence is learnt for and how to ask the source when they last
// landed. Build it with PodsLanding, ObjectLanding or ExternalLanding.
type Landing struct {
	key landingKey
	ask func(context.Context) (time.Time, error)
}

// PodsLanding is the Landing of the pods metric in namespace narrowed by metricSelector (nil
// means every series).
func (s *ScrapeTracker) PodsLanding(namespace, metric string, metricSelector labels.Selector) Landing {
	metricSelector = everythingIfNil(metricSelector)
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: metric}
	return Landing{
		key: landingKey{source: SourceCustom, namespace: namespace, metric: metric, selector: metricSelector.String()},
		ask: func(ctx context.Context) (time.Time, error) {
			return s.src.LastSample(ctx, namespace, info, metricSelector)
		},
	}
}

// ObjectLanding is the Landing of the metric of the objects of kind in namespace (an Object
// metric), read as Fetcher.ObjectMetric reads it: every object of that kind, so one key serves
// every object.
func (s *ScrapeTracker) ObjectLanding(namespace string, kind schema.GroupKind, metric string, metricSelector labels.Selector) Landing {
	metricSelector = everythingIfNil(metricSelector)
	info, ns := objectInfo(namespace, kind, metric)
	return Landing{
		key: landingKey{source: SourceObject, namespace: ns, group: kind.Group, kind: kind.Kind, metric: metric, selector: metricSelector.String()},
		ask: func(ctx context.Context) (time.Time, error) { return s.src.LastSample(ctx, ns, info, metricSelector) },
	}
}

// ExternalLanding is the Landing of an external metric read in namespace.
func (s *ScrapeTracker) ExternalLanding(namespace, metric string, metricSelector labels.Selector) Landing {
	metricSelector = everythingIfNil(metricSelector)
	return Landing{
		key: landingKey{source: SourceExternal, namespace: namespace, metric: metric, selector: metricSelector.String()},
		ask: func(ctx context.Context) (time.Time, error) {
			return s.src.LastExternalSample(ctx, namespace, metricSelector, provider.ExternalMetricInfo{Metric: metric})
		},
	}
}

// Learn returns l's cadence, asking the source and waiting for its answer when the cadence is
// being learnt or due for a refresh. A failed ask keeps what was known: a round is then merely
// not aligned.
func (s *ScrapeTracker) Learn(ctx context.Context, l Landing) (Cadence, error) {
	now := s.clock.Now()
	e, due := s.due(l.key, now)
	if !due {
		return e.cadence, nil
	}
	landed, err := s.answers.get(ctx, l.key, l.ask)
	if err != nil {
		return e.cadence, fmt.Errorf("last sample of %s metric %s in namespace %q: %w", l.key.source, l.key.metric, l.key.namespace, err)
	}
	return s.observe(l.key, landed, now), nil
}

// Known returns what is known of l's cadence without waiting for the source: when a check is
// due, it starts one in the background (one per key at a time, bounded by the timeout and ended
// with ctx), whose answer a later call sees. A caller on a round's path uses it, so that a slow
// source never delays a round.
func (s *ScrapeTracker) Known(ctx context.Context, l Landing) Cadence {
	e, due := s.due(l.key, s.clock.Now())
	if !due || !s.startChecking(l.key) {
		return e.cadence
	}
	s.checks.Go(func() {
		defer s.stopChecking(l.key)
		if _, err := s.Learn(ctx, l); err != nil {
			klog.FromContext(ctx).V(4).Info("No landing time for the metric", "metric", l.key.metric, "namespace", l.key.namespace, "err", err)
		}
	})
	return e.cadence
}

// Wait waits for the checks Known started in the background; they end with the ctx they were
// started with, or with the source's answer (bounded by the timeout).
func (s *ScrapeTracker) Wait() { s.checks.Wait() }

// due returns key's entry and whether it should be checked at now: while it is being learnt,
// and once per refresh after.
func (s *ScrapeTracker) due(key landingKey, now time.Time) (trackedCadence, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	return e, !e.cadence.Known() || now.Sub(e.checked) >= s.refresh
}

// startChecking marks a background check of key under way; false if one already is.
func (s *ScrapeTracker) startChecking(key landingKey) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	if e.checking {
		return false
	}
	e.checking = true
	s.put(key, e)
	return true
}

func (s *ScrapeTracker) stopChecking(key landingKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok {
		e.checking = false
		s.entries[key] = e
	}
}

// observe records a landing seen at checked and returns the key's cadence.
func (s *ScrapeTracker) observe(key landingKey, landed, checked time.Time) Cadence {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[key]
	e.cadence, e.checked = e.cadence.observe(landed), checked
	s.put(key, e)
	return e.cadence
}

// put stores e under key, starting over rather than growing past the bound (cadences are
// relearnt in a few rounds). s.mu is held.
func (s *ScrapeTracker) put(key landingKey, e trackedCadence) {
	if _, ok := s.entries[key]; !ok && len(s.entries) >= s.max {
		clear(s.entries)
	}
	s.entries[key] = e
}

// everythingIfNil reads a nil metric selector as every series.
func everythingIfNil(sel labels.Selector) labels.Selector {
	if sel == nil {
		return labels.Everything()
	}
	return sel
}
