package controller

import (
	"context"
	"testing"

	"k8s.io/client-go/tools/cache"
)

// ownedKeys is an Ownership of a fixed set of keys; their rounds run under ctx.
type ownedKeys struct {
	ctx  context.Context
	keys map[cache.ObjectName]bool
}

func (o *ownedKeys) Own(key cache.ObjectName) (context.Context, func(), bool) {
	if !o.keys[key] {
		return nil, nil, false
	}
	return o.ctx, func() {}, true
}

var _ Ownership = (*ownedKeys)(nil)

func TestAPodAutoscalerAnotherReplicaOwnsIsNeitherQueuedNorRun(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	f.ownership = &ownedKeys{ctx: t.Context()}
	f.restart()
	f.seedCaches()
	tm := f.ctrl.term.Load()
	handler(tm, f.ctrl.owns).OnAdd(f.autoscaler(), false)
	if n := tm.queue.Len(); n != 0 {
		t.Errorf("queued %d PodAutoscalers of a bucket this replica does not hold, want 0", n)
	}
	tm.queue.Add(paKey) // queued while the bucket was held, then lost
	key, _ := tm.queue.Get()
	f.ctrl.syncAndRequeue(t.Context(), tm, key)
	if got := f.replicas(""); got != 2 {
		t.Errorf("replicas = %d, want 2: a replica that does not own the PodAutoscaler must not scale it", got)
	}
	if f.statusWrites() != 0 || tm.memory.Len() != 0 {
		t.Errorf("status writes %d, memory entries %d; want none for a PodAutoscaler not owned", f.statusWrites(), tm.memory.Len())
	}
	if n := tm.queue.Len() + tm.queue.NumRequeues(paKey); n != 0 {
		t.Errorf("requeued %d, want 0: it waits to be adopted again", n)
	}
}

func TestALostBucketIsForgottenAndAGainedOneIsQueuedAndSeededFromStatus(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	f.ownership = &ownedKeys{ctx: t.Context(), keys: map[cache.ObjectName]bool{paKey: true}}
	f.restart()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	tm := f.ctrl.term.Load()
	if tm.memory.Len() != 1 {
		t.Fatalf("memory entries after a round = %d, want 1", tm.memory.Len())
	}
	inBucket := func(k cache.ObjectName) bool { return k == paKey }
	f.ctrl.Forget(t.Context(), func(cache.ObjectName) bool { return false })
	if tm.memory.Len() != 1 {
		t.Errorf("forgetting another bucket dropped this one's memory")
	}
	f.ctrl.Forget(t.Context(), inBucket)
	if tm.memory.Len() != 0 {
		t.Errorf("memory entries after the bucket was lost = %d, want 0", tm.memory.Len())
	}
	f.ctrl.Adopt(t.Context(), inBucket)
	if tm.queue.Len() != 1 {
		t.Fatalf("queued %d after the bucket was gained, want its PodAutoscaler", tm.queue.Len())
	}
	pa := f.autoscaler()
	if got := tm.memory.Recall(pa, f.ctrl.lastRound(pa)); got.CheckpointDesired != pa.Status.DesiredReplicas || got.Checked {
		t.Errorf("the gained PodAutoscaler was not seeded from its status checkpoint: %+v", got)
	}
}

func TestARoundWhoseBucketIsLostIsCancelledAndNotRequeued(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	lost, lose := context.WithCancel(t.Context())
	owner := &ownedKeys{ctx: lost, keys: map[cache.ObjectName]bool{paKey: true}}
	f.ownership = owner
	f.restart()
	f.seedCaches()
	lose()                    // the Lease is lost: the term's context ends ...
	owner.keys[paKey] = false // ... and the bucket is no longer owned
	tm := f.ctrl.term.Load()
	f.ctrl.syncAndRequeue(t.Context(), tm, paKey)
	if got := f.replicas(""); got != 2 {
		t.Errorf("replicas = %d, want 2", got)
	}
	if n := tm.queue.Len() + tm.queue.NumRequeues(paKey); n != 0 {
		t.Errorf("requeued %d, want 0", n)
	}
	owner.keys[paKey] = true // owned, but the round runs under the ended term: its writes fail
	round, release, ok := f.ctrl.claim(t.Context(), paKey)
	if !ok {
		t.Fatal("claim of an owned key refused")
	}
	defer release()
	if round.Err() == nil {
		t.Error("a round claimed under a lost term has a live context, want it cancelled")
	}
}
