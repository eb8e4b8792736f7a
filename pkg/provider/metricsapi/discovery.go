package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/model"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// maxConcurrentSeriesQueries bounds how many /api/v1/series calls one pass runs at once.
const maxConcurrentSeriesQueries = 4

// served says how a discovered metric is served: by which rule, from which series, on which
// backend.
type served struct {
	rule    *rules.Rule
	series  string
	backend *backend
	// clusterWide is true for an external metric of a rule marked namespaced: false, whose
	// queries are not limited to the request's namespace.
	clusterWide bool
}

// snapshot is the immutable result of a discovery pass; requests read it without locks.
type snapshot struct {
	custom       map[provider.CustomMetricInfo]served
	external     map[string]served
	customList   []provider.CustomMetricInfo
	externalList []provider.ExternalMetricInfo
	// incomplete is nil once every series query of the rules has answered at least once;
	// until then it wraps errDiscoveryIncomplete, names the backends of the queries that never
	// answered and their last failure, and a metric the snapshot does not serve may yet exist.
	incomplete error
	// pending holds, per backend with a series query that never answered, why.
	pending map[string]error
}

// errDiscoveryIncomplete means some series query of the rules has never answered, so a metric
// not served may exist: servers answer 503, not 404.
var errDiscoveryIncomplete = errors.New("metric discovery from Prometheus has not succeeded yet")

// emptySnapshot is served until the first discovery pass completes.
func emptySnapshot() *snapshot {
	return &snapshot{
		custom: map[provider.CustomMetricInfo]served{}, external: map[string]served{},
		incomplete: fmt.Errorf("%w: the first pass has not completed", errDiscoveryIncomplete),
	}
}

// unknown is the error for a metric the snapshot does not serve: notFound (a 404), or, while
// discovery is incomplete, the reason it may yet exist (a 503 naming the failure).
func (s *snapshot) unknown(notFound error) error {
	if s.incomplete == nil {
		return notFound
	}
	return s.incomplete
}

// ruleRef is a compiled rule with its field path in the rule file, e.g. rules[0].
type ruleRef struct {
	rule *rules.Rule
	path string
}

// ruleRefs lists the custom rules, then the external rules, in file order.
func ruleRefs(set *rules.RuleSet) []ruleRef {
	refs := make([]ruleRef, 0, len(set.Custom)+len(set.External))
	for i, r := range set.Custom {
		refs = append(refs, ruleRef{rule: r, path: fmt.Sprintf("rules[%d]", i)})
	}
	for i, r := range set.External {
		refs = append(refs, ruleRef{rule: r, path: fmt.Sprintf("externalRules[%d]", i)})
	}
	return refs
}

// seriesKey is a series query on a backend: the same query on two backends is two calls.
type seriesKey struct{ backend, query string }

// discoverer runs discovery passes. It is used by one goroutine at a time (the Run loop), which
// owns last: per series query and backend that has answered, the series shapes of its last
// successful call.
type discoverer struct {
	mapper  apimeta.RESTMapper // decides which resources are namespaced
	clock   clock.PassiveClock
	maxAge  time.Duration
	metrics *providerMetrics
	last    map[seriesKey][]rules.Series
}

// fetchResult is the outcome of one series query.
type fetchResult struct {
	series []rules.Series
	err    error
}

// discover runs one pass for set, each rule's series query on its backend (of bs). A failed
// series query keeps its last good result (if any) and never hides the series of the other
// queries, on its backend or another; a query that has never answered leaves the snapshot
// incomplete, naming its backend.
func (d *discoverer) discover(ctx context.Context, set *rules.RuleSet, bs backends) *snapshot {
	logger := klog.FromContext(ctx)
	start := d.clock.Now()
	refs := ruleRefs(set)
	var queries []seriesKey
	users := map[seriesKey][]string{} // series query -> paths of the rules using it
	for _, ref := range refs {
		k := seriesKey{backend: ref.rule.Backend(), query: ref.rule.SeriesQuery()}
		if _, seen := users[k]; !seen {
			queries = append(queries, k)
		}
		users[k] = append(users[k], ref.path)
	}
	results := d.fetchAll(ctx, queries, bs, start)
	current := make(map[seriesKey][]rules.Series, len(queries))
	never := map[string][]string{} // backend -> series queries that never answered
	lastErr := map[string]error{}
	for i, k := range queries {
		res := results[i]
		if res.err == nil {
			current[k] = res.series
			continue
		}
		previous, ok := d.last[k]
		if ok {
			current[k] = previous
		} else {
			never[k.backend], lastErr[k.backend] = append(never[k.backend], k.query), res.err
		}
		if ctx.Err() != nil {
			continue // shutting down: not a Prometheus failure
		}
		for _, path := range users[k] {
			d.metrics.seriesFailures.WithLabelValues(path, k.backend).Inc()
		}
		logger.Error(res.err, "Series discovery failed; keeping the last good series", "backend", k.backend, "seriesQuery", k.query,
			"rules", users[k], "keptSeries", len(previous), "hadPrevious", ok)
	}
	d.last = current // drops queries that the rules no longer use
	snap := buildSnapshot(refs, current, bs, d.mapper)
	total := map[string]int{}
	for _, k := range queries {
		total[k.backend]++
	}
	snap.pending, snap.incomplete = pendingBackends(never, total, lastErr)
	d.metrics.observeDiscovery(d.clock.Since(start), len(snap.customList), len(snap.externalList))
	logger.V(2).Info("Discovered metrics", "seriesQueries", len(queries), "backends", len(bs), "custom", len(snap.customList),
		"external", len(snap.externalList), "neverAnswered", len(never), "duration", d.clock.Since(start))
	return snap
}

// pendingBackends turns the series queries that never answered, by backend, into the
// snapshot's pending map and its incomplete error (nil when none), which names each backend.
func pendingBackends(never map[string][]string, total map[string]int, lastErr map[string]error) (map[string]error, error) {
	if len(never) == 0 {
		return nil, nil
	}
	pending := make(map[string]error, len(never))
	names := make([]string, 0, len(never))
	for b, qs := range never {
		pending[b] = fmt.Errorf("%w: backend %s: %d of %d series queries never answered (%s): %w", errDiscoveryIncomplete,
			b, len(qs), total[b], strings.Join(qs, ", "), lastErr[b])
		names = append(names, b)
	}
	sort.Strings(names)
	errs := make([]error, len(names))
	for i, b := range names {
		errs[i] = pending[b]
	}
	if len(errs) == 1 {
		return pending, errs[0]
	}
	return pending, fmt.Errorf("backends %s not discovered yet: %w", strings.Join(names, ", "), errors.Join(errs...))
}

// fetchAll runs the series queries, each on its backend without a namespace (its fixed tenant,
// if any), at most maxConcurrentSeriesQueries at a time; each call is bounded by the backend
// client's timeout.
func (d *discoverer) fetchAll(ctx context.Context, queries []seriesKey, bs backends, now time.Time) []fetchResult {
	out := make([]fetchResult, len(queries))
	sem := make(chan struct{}, maxConcurrentSeriesQueries)
	var wg sync.WaitGroup
	for i, k := range queries {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			client, _ := bs[k.backend].forNamespace("")
			sets, err := client.Series(ctx, []string{k.query}, now.Add(-d.maxAge), now)
			if err != nil {
				out[i] = fetchResult{err: fmt.Errorf("discover series %s: %w", k.query, err)}
				return
			}
			out[i] = fetchResult{series: compactSeries(sets)}
		})
	}
	wg.Wait()
	return out
}

// compactSeries keeps one series per distinct name and set of non-empty label names: rules only
// look at the name and at which labels are set (the values already matched the series query), so
// the label values of every pod need not be held. The result is sorted, for determinism.
func compactSeries(sets []model.LabelSet) []rules.Series {
	type shaped struct {
		shape  string
		series rules.Series
	}
	seen := map[string]bool{}
	var found []shaped
	keys := make([]string, 0, 8)
	for _, ls := range sets {
		name := string(ls[model.MetricNameLabel])
		if name == "" {
			continue
		}
		keys = keys[:0]
		for k, v := range ls {
			if k != model.MetricNameLabel && v != "" {
				keys = append(keys, string(k))
			}
		}
		sort.Strings(keys)
		shape := name + "\x00" + strings.Join(keys, "\x00")
		if seen[shape] {
			continue
		}
		seen[shape] = true
		labels := make(map[string]string, len(keys))
		for _, k := range keys {
			labels[k] = string(ls[model.LabelName(k)])
		}
		found = append(found, shaped{shape: shape, series: rules.Series{Name: name, Labels: labels}})
	}
	sort.Slice(found, func(i, j int) bool { return found[i].shape < found[j].shape })
	out := make([]rules.Series, len(found))
	for i, f := range found {
		out[i] = f.series
	}
	return out
}

// buildSnapshot describes every series with every rule using its query; the first rule (in file
// order) that yields a metric serves it. The snapshot is complete (its discovery answered). A resource is served namespaced when its series are
// and mapper says the resource is namespace-scoped (nodes, namespaces, persistentvolumes and
// cluster-scoped custom resources are not).
func buildSnapshot(refs []ruleRef, seriesByQuery map[seriesKey][]rules.Series, bs backends, mapper apimeta.RESTMapper) *snapshot {
	snap := emptySnapshot()
	snap.incomplete = nil
	for _, ref := range refs {
		b := bs[ref.rule.Backend()]
		for _, s := range seriesByQuery[seriesKey{backend: b.name, query: ref.rule.SeriesQuery()}] {
			info, ok := ref.rule.Describe(s)
			if !ok {
				continue
			}
			entry := served{rule: ref.rule, series: info.Series, backend: b, clusterWide: ref.rule.External() && !info.Namespaced}
			if ref.rule.External() {
				if _, taken := snap.external[info.Metric]; !taken {
					snap.external[info.Metric] = entry
					snap.externalList = append(snap.externalList, provider.ExternalMetricInfo{Metric: info.Metric})
				}
				continue
			}
			for _, res := range info.Resources {
				namespaced := res.Namespaced && namespaceScoped(mapper, res.GroupResource)
				key := provider.CustomMetricInfo{GroupResource: res.GroupResource, Namespaced: namespaced, Metric: info.Metric}
				if _, taken := snap.custom[key]; !taken {
					snap.custom[key] = entry
					snap.customList = append(snap.customList, key)
				}
			}
		}
	}
	return snap
}

// namespaceScoped asks mapper whether gr is namespace-scoped; a resource it cannot map keeps
// the rule's decision (namespaced).
func namespaceScoped(mapper apimeta.RESTMapper, gr schema.GroupResource) bool {
	gvk, err := mapper.KindFor(gr.WithVersion(""))
	if err != nil {
		return true
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return true
	}
	return m.Scope.Name() == apimeta.RESTScopeNameNamespace
}
