package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// maxCacheSyncWait bounds the wait for a new informer's first LIST, on top of the request's
// own deadline (in-process callers may pass a context without one).
const maxCacheSyncWait = 30 * time.Second

// errCacheNotSynced means an object cache could not be filled in time; requests answer 503.
var errCacheNotSynced = errors.New("object cache not synced")

// objectCache resolves label selectors to object names from the shared informers, one per
// GroupVersionResource, shared by all requests. The informers of the resources the discovered
// metrics are served for are started at discovery (prestart), before the first request and
// before ready; any other resource's is started on first use. cmd owns the informer factories:
// it strips the cached objects and shuts the informers down.
type objectCache struct {
	informers Informers

	mu  sync.Mutex
	ctx context.Context // the Run context the informers run under; nil before Run
	// prestarted are the resources prestart was given, in order, without repeats.
	prestarted []schema.GroupVersionResource
}

func newObjectCache(inf Informers) *objectCache {
	return &objectCache{informers: inf}
}

// start records the context the informers run under, and starts those prestart asked for so
// far; informers started later stop with it too.
func (c *objectCache) start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
	if len(c.prestarted) > 0 {
		c.startLocked()
	}
}

// startLocked starts the informers asked for so far under the Run context; c.mu is held.
func (c *objectCache) startLocked() {
	if f, ok := c.informers.(interface{ StartWithContext(context.Context) }); ok {
		f.StartWithContext(c.ctx) // keeps the Run context's logger
	} else {
		c.informers.Start(c.ctx.Done())
	}
}

// prestart starts the informers of gvrs (at once while running, else at start) without
// waiting for them, so that they fill before the first request that needs them; unsynced
// reports those still filling.
func (c *objectCache) prestart(gvrs []schema.GroupVersionResource) {
	c.mu.Lock()
	defer c.mu.Unlock()
	added := false
	for _, gvr := range gvrs {
		if slices.Contains(c.prestarted, gvr) {
			continue
		}
		c.informers.ForResource(gvr) // registers it with the factory
		c.prestarted = append(c.prestarted, gvr)
		added = true
	}
	if added && c.ctx != nil {
		c.startLocked()
	}
}

// unsynced returns the resources given to prestart whose informer has not synced yet.
func (c *objectCache) unsynced() []string {
	c.mu.Lock()
	gvrs := slices.Clone(c.prestarted)
	c.mu.Unlock()
	var out []string
	for _, gvr := range gvrs {
		if !c.informers.ForResource(gvr).Informer().HasSynced() {
			out = append(out, gvr.GroupResource().String())
		}
	}
	return out
}

// names returns the sorted names of the objects of gvr matching selector, in namespace (empty
// for root-scoped resources). The first call for a resource starts its informer and waits for it
// to sync, bounded by ctx.
func (c *objectCache) names(ctx context.Context, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]string, error) {
	inf, err := c.synced(ctx, gvr)
	if err != nil {
		return nil, err
	}
	var objs []runtime.Object
	if namespace == "" {
		objs, err = inf.Lister().List(selector)
	} else {
		objs, err = inf.Lister().ByNamespace(namespace).List(selector)
	}
	if err != nil {
		return nil, fmt.Errorf("list %s in %q from cache: %w", gvr.String(), namespace, err)
	}
	names := make([]string, 0, len(objs))
	for _, obj := range objs {
		m, err := apimeta.Accessor(obj)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvr.String(), err)
		}
		names = append(names, m.GetName())
	}
	sort.Strings(names)
	return names, nil
}

// exists reports whether the cache holds the object of gvr named name in namespace (empty for
// root-scoped resources): a request by name is answered for the same objects a list would
// answer for, so a deleted object drops out at once. Like names, the first call for a resource
// starts its informer.
func (c *objectCache) exists(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string) (bool, error) {
	inf, err := c.synced(ctx, gvr)
	if err != nil {
		return false, err
	}
	if namespace == "" {
		_, err = inf.Lister().Get(name)
	} else {
		_, err = inf.Lister().ByNamespace(namespace).Get(name)
	}
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("get %s %s from cache: %w", gvr.String(), klog.KRef(namespace, name).String(), err)
	}
	return true, nil
}

// synced returns gvr's informer, started under the Run context and synced, bounded by ctx and
// maxCacheSyncWait.
func (c *objectCache) synced(ctx context.Context, gvr schema.GroupVersionResource) (informers.GenericInformer, error) {
	c.mu.Lock()
	runCtx := c.ctx
	c.mu.Unlock()
	if runCtx == nil {
		return nil, fmt.Errorf("list %s: %w: the provider is not running", gvr.String(), errCacheNotSynced)
	}
	inf := c.informers.ForResource(gvr)
	if !inf.Informer().HasSynced() {
		c.mu.Lock()
		c.startLocked() // a resource not prestarted starts on first use
		c.mu.Unlock()
		syncCtx, cancel := context.WithTimeout(ctx, maxCacheSyncWait)
		defer cancel()
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
			return nil, fmt.Errorf("list %s: %w", gvr.String(), errCacheNotSynced)
		}
	}
	return inf, nil
}
