package metrics

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// Defaults of FetcherConfig.
const (
	// DefaultFreshness is how long a result is reused: half the default sync period of 15 s.
	DefaultFreshness = 7500 * time.Millisecond
	// DefaultRetentionRounds is FetcherConfig.Retention, in freshness periods, when it is left 0:
	// at the defaults a finished answer serves rounds that waited up to 5 minutes in the queue.
	// It must outlast the wait between two rounds of a namespace in a long queue (namespaces ×
	// query time ÷ workers: 100 × 6 s ÷ 16 = 37.5 s in the 10,000-object bench), or every round
	// asks anew again.
	DefaultRetentionRounds = 40
	// DefaultMaxEntries bounds the cached results (distinct namespace and metric keys).
	DefaultMaxEntries = 4096
	// DefaultTimeout bounds one call to a source.
	DefaultTimeout = 30 * time.Second
)

var (
	// ErrNoSource means the metric's source was not configured.
	ErrNoSource = errors.New("no metric source configured")
	// ErrInvalidConfig means a FetcherConfig field is out of range.
	ErrInvalidConfig = errors.New("invalid fetcher config")
)

// FetcherConfig is everything NewFetcher needs.
type FetcherConfig struct {
	// Custom serves custom metrics; nil makes every custom metric fail with ErrNoSource.
	Custom CustomSource
	// Resource serves cpu and memory; nil makes every resource metric fail with ErrNoSource.
	Resource ResourceSource
	// External serves external metrics; nil makes every external metric fail with ErrNoSource.
	External ExternalSource
	// Clock times the freshness of results; nil means the real clock.
	Clock clock.PassiveClock
	// Freshness is how long before a round fell due (WithRoundDue; a read without one is due when
	// it is made) a result may have been asked and still serve it; 0 means DefaultFreshness. A
	// failure is never reused. Set it below the sync period so that autoscalers due in the same
	// round share a call and the next round reads anew.
	Freshness time.Duration
	// Retention is how long a finished result is kept for the rounds that fell due before it was
	// asked and waited in the queue since; 0 means DefaultRetentionRounds × Freshness. A round
	// that waited longer asks anew. It costs no more entries: one per distinct query, as always.
	Retention time.Duration
	// MaxEntries bounds the cached results; 0 means DefaultMaxEntries.
	MaxEntries int
	// Timeout bounds one call to a source; 0 means DefaultTimeout.
	Timeout time.Duration
	// Counter counts requests and the calls made for them; nil counts nothing.
	Counter Counter
}

// Sources of data, as passed to a Counter.
const (
	// SourceCustom is the custom metrics source.
	SourceCustom = "custom"
	// SourceResource is the resource (cpu, memory) metrics source.
	SourceResource = "resource"
	// SourceExternal is the external metrics source.
	SourceExternal = "external"
	// SourceObject is the custom metrics source asked for the objects of one kind (Object metrics).
	SourceObject = "object"
)

// Counter counts the Fetcher's work, so that the calls saved by batching can be seen: the
// difference between requests and calls is what sharing saved.
type Counter interface {
	// Requested counts one request for a source's data, from one autoscaler's metric.
	Requested(source string)
	// Called counts one call made to a source.
	Called(source string)
}

// noCounter counts nothing.
type noCounter struct{}

func (noCounter) Requested(string) {}
func (noCounter) Called(string)    {}

// customKey identifies one batched custom-metric call.
type customKey struct {
	namespace, metric, selector string
}

// Fetcher returns per-pod samples of a namespace, asking each source once per namespace and
// metric and round however many autoscalers ask and however long their rounds wait in the queue
// (see WithRoundDue), and sharing a call in progress among concurrent callers; a failed call is
// shared only by the callers waiting for it and never reused (see caching.policy). It is safe
// for concurrent use.
type Fetcher struct {
	custom     CustomSource
	resource   ResourceSource
	external   ExternalSource
	counter    Counter
	customs    *cache[customKey, map[string]replicas.Sample]
	usages     *cache[string, podUsage]
	externals  *cache[customKey, []int64]
	objects    *cache[objectKey, map[string]objectValue]
	containers *cache[containerKey, containerUsage]
}

// NewFetcher returns a Fetcher over the sources of cfg.
func NewFetcher(cfg FetcherConfig) (*Fetcher, error) {
	cs, err := cachingOf(cfg.Clock, cfg.Freshness, cfg.MaxEntries, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	if cs, err = cs.withRetention(cfg.Retention); err != nil {
		return nil, err
	}
	if cfg.Counter == nil {
		cfg.Counter = noCounter{}
	}
	f := &Fetcher{custom: cfg.Custom, resource: cfg.Resource, counter: cfg.Counter, external: cfg.External}
	var errs [5]error
	f.customs, errs[0] = newCacheOf[customKey, map[string]replicas.Sample](cs)
	f.usages, errs[1] = newCacheOf[string, podUsage](cs)
	f.externals, errs[2] = newCacheOf[customKey, []int64](cs)
	f.objects, errs[3] = newCacheOf[objectKey, map[string]objectValue](cs)
	f.containers, errs[4] = newCacheOf[containerKey, containerUsage](cs)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return f, nil
}

// PodMetric returns the samples of custom metric for every pod of namespace that has one,
// keyed by pod name, narrowed by metricSelector (nil means every series). The map is shared
// with other callers and must not be modified.
func (f *Fetcher) PodMetric(ctx context.Context, namespace, metric string, metricSelector labels.Selector) (map[string]replicas.Sample, error) {
	if metricSelector == nil {
		metricSelector = labels.Everything()
	}
	if f.custom == nil {
		return nil, fmt.Errorf("get custom metric %s in namespace %s: %w", metric, namespace, ErrNoSource)
	}
	key := customKey{namespace: namespace, metric: metric, selector: metricSelector.String()}
	f.counter.Requested(SourceCustom)
	samples, err := f.customs.get(ctx, key, func(ctx context.Context) (map[string]replicas.Sample, error) {
		f.counter.Called(SourceCustom)
		return fetchCustom(ctx, f.custom, namespace, metric, metricSelector)
	})
	if err != nil {
		return nil, fmt.Errorf("get custom metric %s (metric selector %q) in namespace %s: %w", metric, selectorText(key.selector), namespace, err)
	}
	return samples, nil
}

// ResourceMetric returns the usage of resource (cpu or memory) of every pod of namespace that
// has one, summed over its containers and keyed by pod name; both resources come from one
// list. The map is shared with other callers and must not be modified.
func (f *Fetcher) ResourceMetric(ctx context.Context, namespace string, resource corev1.ResourceName) (map[string]replicas.Sample, error) {
	if f.resource == nil {
		return nil, fmt.Errorf("get resource metric %s in namespace %s: %w", resource, namespace, ErrNoSource)
	}
	f.counter.Requested(SourceResource)
	usage, err := f.usages.get(ctx, namespace, func(ctx context.Context) (podUsage, error) {
		f.counter.Called(SourceResource)
		return fetchUsage(ctx, f.resource, namespace)
	})
	if err != nil {
		return nil, fmt.Errorf("get resource metric %s in namespace %s: %w", resource, namespace, err)
	}
	return usage.pods[resource], nil
}

// maxSelectorText is the most of a metric selector an error quotes: a selector may be hundreds
// of KiB (a long In list), and an error names it to be read in a condition or an event.
const maxSelectorText = 256

// selectorText returns a selector's text for an error: whole when short, otherwise its two
// ends and how much was left out between them.
func selectorText(s string) string {
	if len(s) <= maxSelectorText {
		return s
	}
	head, tail := maxSelectorText/2, len(s)-maxSelectorText/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s…(%d bytes)…%s", s[:head], tail-head, s[tail:])
}
