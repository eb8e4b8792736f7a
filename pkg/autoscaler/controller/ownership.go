package controller

import (
	"context"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Ownership says which PodAutoscalers this replica runs, when the autoscaler is sharded over
// replicas (see shard/election.Shards). Without one (Config.Ownership nil), Run runs every
// PodAutoscaler: the Lease holder's, as with a single Lease.
type Ownership interface {
	// Own reports whether this replica owns key. If it does, one round of key runs under ctx,
	// which ends when the ownership does, and calls done once the round has ended.
	Own(key cache.ObjectName) (ctx context.Context, done func(), ok bool)
}

// owns reports whether this replica runs key now: a key it does not own is never queued.
func (c *Controller) owns(key cache.ObjectName) bool {
	if c.owner == nil {
		return true
	}
	_, done, ok := c.owner.Own(key)
	if ok {
		done()
	}
	return ok
}

// claim returns the context of one round of key (or of its deferred status write): ctx, ended
// also when the ownership of key ends, and release, to call once the round is over. ok is
// false when this replica does not own key: the round must not start.
func (c *Controller) claim(ctx context.Context, key cache.ObjectName) (round context.Context, release func(), ok bool) {
	if c.owner == nil {
		return ctx, func() {}, true
	}
	owned, done, ok := c.owner.Own(key)
	if !ok {
		return nil, nil, false
	}
	round, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(owned, cancel)
	if owned.Err() != nil { // AfterFunc cancels in a goroutine of its own: not before the round starts
		cancel()
	}
	return round, func() {
		stop()
		cancel()
		done()
	}, true
}

// Adopt queues the PodAutoscalers owns matches for a round now: those of a bucket this replica
// just gained. Their first round seeds them from their status, as the first round of a term does.
func (c *Controller) Adopt(ctx context.Context, owns func(cache.ObjectName) bool) {
	pas, err := c.paLister.List(labels.Everything())
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing PodAutoscalers to adopt failed")
		return
	}
	tm := c.term.Load()
	n := 0
	for _, pa := range pas {
		if key := (cache.ObjectName{Namespace: pa.Namespace, Name: pa.Name}); owns(key) {
			tm.queue.Add(key)
			n++
		}
	}
	klog.FromContext(ctx).V(2).Info("Adopted PodAutoscalers", "count", n)
}

// Forget drops what this replica knows of the PodAutoscalers owns matches: those of a bucket it
// lost, once their rounds have stopped. A later owner seeds them from their status.
func (c *Controller) Forget(ctx context.Context, owns func(cache.ObjectName) bool) {
	n := c.term.Load().memory.ForgetMatching(owns)
	klog.FromContext(ctx).V(2).Info("Forgot PodAutoscalers", "count", n)
}
