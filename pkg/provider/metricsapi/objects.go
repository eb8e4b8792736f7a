package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// maxCacheSyncWait bounds the wait for a new informer's first LIST, on top of the request's
// own deadline (in-process callers may pass a context without one).
const maxCacheSyncWait = 30 * time.Second

// errCacheNotSynced means an object cache could not be filled in time; requests answer 503.
var errCacheNotSynced = errors.New("object cache not synced")

// objectCache resolves label selectors to object names from metadata-only informers, one per
// GroupVersionResource, started lazily on first use and shared by all requests. Objects are
// stripped to name, namespace and labels before they are stored.
type objectCache struct {
	factory metadatainformer.SharedInformerFactory

	mu  sync.Mutex
	ctx context.Context // the Run context the informers run under; nil before Run
}

func newObjectCache(client metadata.Interface) *objectCache {
	factory := metadatainformer.NewSharedInformerFactoryWithOptions(client, 0, metadatainformer.WithTransform(stripMetadata))
	return &objectCache{factory: factory}
}

// start records the context the informers run under; informers started later stop with it.
func (c *objectCache) start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
}

// shutdown waits for the informers to stop once their context is done.
func (c *objectCache) shutdown() { c.factory.Shutdown() }

// names returns the sorted names of the objects of gvr matching selector, in namespace (empty
// for root-scoped resources). The first call for a resource starts its informer and waits for it
// to sync, bounded by ctx.
func (c *objectCache) names(ctx context.Context, gvr schema.GroupVersionResource, namespace string, selector labels.Selector) ([]string, error) {
	c.mu.Lock()
	runCtx := c.ctx
	c.mu.Unlock()
	if runCtx == nil {
		return nil, fmt.Errorf("list %s: %w: the provider is not running", gvr.String(), errCacheNotSynced)
	}
	inf := c.factory.ForResource(gvr)
	if f, ok := c.factory.(interface{ StartWithContext(context.Context) }); ok {
		f.StartWithContext(runCtx) // keeps the Run context's logger
	} else {
		c.factory.Start(runCtx.Done())
	}
	if !inf.Informer().HasSynced() {
		syncCtx, cancel := context.WithTimeout(ctx, maxCacheSyncWait)
		defer cancel()
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.Informer().HasSynced) {
			return nil, fmt.Errorf("list %s: %w", gvr.String(), errCacheNotSynced)
		}
	}
	var (
		objs []runtime.Object
		err  error
	)
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

// stripMetadata keeps only what selector resolution needs, to bound the cache's memory.
func stripMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            m.Name,
			Namespace:       m.Namespace,
			UID:             m.UID,
			ResourceVersion: m.ResourceVersion,
			Labels:          m.Labels,
		},
	}, nil
}
