package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/model"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// Names of the checks returned by HealthChecker and ObjectCachesHealthChecker.
const (
	HealthCheckName       = "metrics-discovery"
	ObjectCachesCheckName = "metrics-object-caches"
)

// Provider serves custom and external metrics from Prometheus. Requests read an immutable
// snapshot of the discovered metrics and never discover or LIST themselves; Run keeps the
// snapshot and the rules current.
type Provider struct {
	mapper   apimeta.RESTMapper
	objects  *objectCache
	metrics  *providerMetrics
	interval time.Duration
	clock    clock.WithTicker
	reloadCh <-chan struct{}

	customQueries   *sharedQueries[objectSamples]
	externalQueries *sharedQueries[model.Vector]

	// source, disc, rules and backends are owned by the goroutine running Run.
	source   *ruleSource
	disc     *discoverer
	rules    *rules.RuleSet
	backends backends

	snap     atomic.Pointer[snapshot]
	resource atomic.Pointer[resourceState]
	ready    atomic.Bool
	// readyBackends are the names of the backends whose discovery has answered once.
	readyBackends sync.Map
	running       atomic.Bool
}

var _ provider.MetricsProvider = (*Provider)(nil)

// New validates cfg, loads and compiles the rules (a bad rule file is an error here) and
// registers the provider's metrics. Nothing is discovered before Run.
func New(cfg Config) (*Provider, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("metrics provider config: %w", err)
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	source := &ruleSource{path: cfg.RulesFile, mapper: cfg.Mapper, limits: rules.Limits{MaxQueryBytes: cfg.MaxQueryBytes},
		prom: cfg.Prometheus, factory: cfg.Backends}
	res, err := source.load(true)
	if err != nil {
		return nil, err
	}
	m, err := newProviderMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	p := &Provider{
		mapper:   cfg.Mapper,
		objects:  newObjectCache(cfg.Informers),
		metrics:  m,
		interval: cfg.DiscoveryInterval,
		clock:    clk,
		reloadCh: cfg.Reload,
		source:   source,
		disc:     &discoverer{mapper: cfg.Mapper, clock: clk, maxAge: cfg.SeriesMaxAge, metrics: m},
		rules:    res.set,
		backends: res.backends,
	}
	if p.customQueries, err = newSharedQueries[objectSamples](clk, cfg.QueryCacheMaxAge, m.queryCounter(apiCustom)); err != nil {
		return nil, err
	}
	if p.externalQueries, err = newSharedQueries[model.Vector](clk, cfg.QueryCacheMaxAge, m.queryCounter(apiExternal)); err != nil {
		return nil, err
	}
	p.snap.Store(emptySnapshot())
	p.storeResource(res)
	return p, nil
}

// Run discovers metrics at once and then every DiscoveryInterval, reloads the rule file when
// its content changes or when Config.Reload receives (rediscovering at once after a good
// reload), and serves the object informers, until ctx is done. It returns nil then; it may be
// called only once. Its loops run on the Config's clock.
func (p *Provider) Run(ctx context.Context) error {
	if !p.running.CompareAndSwap(false, true) {
		return errors.New("metrics provider is already running")
	}
	p.objects.start(ctx)

	p.refresh(ctx)
	relist := p.clock.NewTicker(p.interval)
	defer func() { relist.Stop() }()
	var poll <-chan time.Time
	if p.source.path != "" {
		t := p.clock.NewTicker(rulesPollInterval)
		defer t.Stop()
		poll = t.C()
	}
	for {
		reloaded := false
		select {
		case <-ctx.Done():
			return nil
		case <-relist.C():
			p.refresh(ctx)
		case <-poll:
			reloaded = p.reload(ctx, reloadTrigger)
		case <-p.reloadCh:
			p.reload(ctx, reloadOnSignal)
			reloaded = true
		}
		if reloaded {
			p.refresh(ctx)
			relist.Stop() // the next pass is a full interval after this one
			relist = p.clock.NewTicker(p.interval)
		}
	}
}

// refresh runs one discovery pass with the current rules, publishes its snapshot and starts
// the object informers of the resources it serves.
func (p *Provider) refresh(ctx context.Context) {
	snap := p.disc.discover(ctx, p.rules, p.backends)
	p.snap.Store(snap)
	for name := range p.backends {
		if snap.pending[name] == nil {
			p.readyBackends.Store(name, true)
		}
	}
	p.objects.prestart(servedResources(snap, p.mapper))
	if snap.incomplete == nil && !p.ready.Swap(true) {
		klog.FromContext(ctx).Info("First metrics discovery pass succeeded", "custom", len(snap.customList), "external", len(snap.externalList))
	}
}

// HealthChecker returns the "metrics-discovery" check: it passes once every series query of the
// rules has answered at least once (a discovery pass succeeded), and stays passed; until then it
// names the failure, e.g. Prometheus unavailable. A server with an incomplete snapshot could not
// tell an unknown metric from one not yet discovered.
func (p *Provider) HealthChecker() healthz.HealthChecker {
	return healthz.NamedCheck(HealthCheckName, func(*http.Request) error {
		if p.ready.Load() {
			return nil
		}
		if err := p.snap.Load().incomplete; err != nil {
			return err
		}
		return errDiscoveryIncomplete // between a complete pass and its ready flag
	})
}

// BackendHealthCheckerPrefix starts the name of each backend's check (BackendHealthCheckers).
const BackendHealthCheckerPrefix = "metrics-backend-"

// BackendHealthCheckers returns one check per backend of the rules loaded at start, named
// metrics-backend-<name>, so that /readyz?verbose says which backend is not ready (healthz
// withholds the reasons): it passes once every series query of that backend has answered at
// least once, and stays passed, as the metrics-discovery check does for all of them. A backend
// down later fails only its own metrics (503 naming it). A backend a reload adds has no check.
// Call it before Run.
func (p *Provider) BackendHealthCheckers() []healthz.HealthChecker {
	names := make([]string, 0, len(p.backends))
	for name := range p.backends {
		names = append(names, name)
	}
	slices.Sort(names)
	checks := make([]healthz.HealthChecker, len(names))
	for i, name := range names {
		checks[i] = healthz.NamedCheck(BackendHealthCheckerPrefix+name, func(*http.Request) error {
			if _, ok := p.readyBackends.Load(name); ok {
				return nil
			}
			if err := p.snap.Load().pending[name]; err != nil {
				return err
			}
			return fmt.Errorf("%w: backend %s: no discovery pass has completed", errDiscoveryIncomplete, name)
		})
	}
	return checks
}

// ObjectCachesHealthChecker returns the "metrics-object-caches" check: it passes once a
// discovery pass has succeeded and the object cache (informer) of every resource that pass
// serves custom metrics for has synced, and stays passed; until then it names the resources
// whose cache is still filling (or cannot list them: podpilot's RBAC must allow list and watch
// on every resource the rule file maps series to). A resource that a later pass or a reload
// adds starts its cache at that pass; its first request waits for the sync.
func (p *Provider) ObjectCachesHealthChecker() healthz.HealthChecker {
	var passed atomic.Bool
	return healthz.NamedCheck(ObjectCachesCheckName, func(*http.Request) error {
		if passed.Load() {
			return nil
		}
		if !p.ready.Load() {
			return fmt.Errorf("%w: the resources to cache are not known yet", errDiscoveryIncomplete)
		}
		if missing := p.objects.unsynced(); len(missing) > 0 {
			return fmt.Errorf("%w: %s", errCacheNotSynced, strings.Join(missing, ", "))
		}
		passed.Store(true)
		return nil
	})
}

// servedResources returns the resources snap serves custom metrics for that mapper knows, in
// the order of snap's list; a resource mapper does not know is never served (resolveCustom).
func servedResources(snap *snapshot, mapper apimeta.RESTMapper) []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	for _, info := range snap.customList {
		gvr, err := mapper.ResourceFor(info.GroupResource.WithVersion(""))
		if err != nil || slices.Contains(out, gvr) {
			continue
		}
		out = append(out, gvr)
	}
	return out
}

// ResourceQueries returns the resource-metric rules of the rules in force (reloads included),
// or nil when the rule file has no resourceRules. It is safe for concurrent use.
func (p *Provider) ResourceQueries() *rules.ResourceQueries {
	return p.resource.Load().queries
}

// storeResource installs the resource-metric rules of res and their backend.
func (p *Provider) storeResource(res loadResult) {
	st := &resourceState{queries: res.set.Resource}
	if st.queries != nil {
		st.backend = res.backends[st.queries.Backend]
	}
	p.resource.Store(st)
}

// ListAllMetrics implements provider.CustomMetricsProvider. It returns the snapshot's prebuilt
// slice, which callers must not modify.
func (p *Provider) ListAllMetrics() []provider.CustomMetricInfo {
	return p.snap.Load().customList
}

// ListAllExternalMetrics implements provider.ExternalMetricsProvider. It returns the snapshot's
// prebuilt slice, which callers must not modify.
func (p *Provider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	return p.snap.Load().externalList
}
