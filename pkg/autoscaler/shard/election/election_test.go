package election

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/autoscaler/shard"
)

// owner records what the shards told the controller: the keys of a fixed set adopted and forgotten.
type owner struct {
	keys            []cache.ObjectName
	mu              sync.Mutex
	adopted, forgot []cache.ObjectName
}

func (o *owner) Adopt(_ context.Context, owns func(cache.ObjectName) bool) {
	o.record(&o.adopted, owns)
}
func (o *owner) Forget(_ context.Context, owns func(cache.ObjectName) bool) {
	o.record(&o.forgot, owns)
}

func (o *owner) record(into *[]cache.ObjectName, owns func(cache.ObjectName) bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.keys {
		if owns(k) {
			*into = append(*into, k)
		}
	}
}

func (o *owner) forgotten(k cache.ObjectName) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Contains(o.forgot, k)
}

func newShards(t *testing.T, client *kubefake.Clientset, id string) *Shards {
	t.Helper()
	s, err := New(Config{Client: client.CoordinationV1(), Namespace: "podpilot-system", Name: "podpilot", Shards: 6,
		Identity: id, LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type replica struct {
	s    *Shards
	stop context.CancelFunc
	done chan struct{} // closed once Run has returned err
	err  error
}

func start(t *testing.T, s *Shards, o *owner) *replica {
	ctx, stop := context.WithCancel(t.Context())
	r := &replica{s: s, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = s.Run(ctx, o)
	}()
	t.Cleanup(func() { stop(); <-r.done })
	return r
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// startRound waits until r holds key's bucket and starts a round of key: it returns the round's
// context and finish, which ends the round (once; the test's cleanup also calls it, before Run's
// cleanup waits for the round, should the test fail first).
func startRound(t *testing.T, r *replica, key cache.ObjectName) (context.Context, func()) {
	t.Helper()
	var round context.Context
	var done func()
	waitFor(t, "the key's bucket held", func() bool {
		var ok bool
		round, done, ok = r.s.Own(key)
		return ok
	})
	var once sync.Once
	finish := func() { once.Do(done) }
	t.Cleanup(finish)
	return round, finish
}

// spread reports whether the replicas hold every bucket once, each its want.
func spread(rs []*replica, want ...int) bool {
	seen := map[int]bool{}
	for i, r := range rs {
		h := r.s.Held()
		if len(h) != want[i] {
			return false
		}
		for _, b := range h {
			if seen[b] {
				return false
			}
			seen[b] = true
		}
	}
	return len(seen) == 6
}

func TestBucketsSpreadOverReplicasAndMoveBackWhenOneReturns(t *testing.T) {
	client := kubefake.NewClientset()
	o := &owner{}
	a, b := start(t, newShards(t, client, "a"), o), start(t, newShards(t, client, "b"), o)
	c := start(t, newShards(t, client, "c"), o)
	waitFor(t, "six buckets spread 2/2/2 over three replicas", func() bool { return spread([]*replica{a, b, c}, 2, 2, 2) })

	// c stops: it releases its buckets and member slot, and the two others take a fair share of three.
	c.stop()
	if <-c.done; c.err != nil {
		t.Fatalf("Run = %v", c.err)
	}
	waitFor(t, "3/3 over the two replicas left", func() bool { return spread([]*replica{a, b}, 3, 3) })

	// c comes back (a new process, a new identity): a and b release one each above their share.
	c2 := start(t, newShards(t, client, "c2"), o)
	waitFor(t, "2/2/2 again", func() bool { return spread([]*replica{a, b, c2}, 2, 2, 2) })
}

func TestALostBucketStopsItsRoundsBeforeItIsForgotten(t *testing.T) {
	client := kubefake.NewClientset()
	key := cache.ObjectName{Namespace: "default", Name: "web"}
	o := &owner{keys: []cache.ObjectName{key}}
	var mu sync.Mutex
	failRenewals := false
	client.PrependReactor("update", "leases", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		l := a.(clienttesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if failRenewals && l.Name == BucketLease("podpilot", shard.Bucket(key.Namespace, key.Name, 6)) {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	r := start(t, newShards(t, client, "a"), o)
	round, finish := startRound(t, r, key)

	// Renewals of the key's bucket fail: the round in flight is cancelled, and no new round may start;
	// the key is forgotten only once the round in flight is done.
	mu.Lock()
	failRenewals = true
	mu.Unlock()
	waitFor(t, "the round's context to end with the Lease", func() bool { return round.Err() != nil })
	if _, _, ok := r.s.Own(key); ok {
		t.Error("a new round of a lost bucket was allowed")
	}
	if o.forgotten(key) {
		t.Fatal("the key was forgotten while its round was still in flight")
	}
	finish()
	waitFor(t, "the key forgotten once its round is done", func() bool { return o.forgotten(key) })
}

func TestShutdownStopsRoundsBeforeReleasingTheLeases(t *testing.T) {
	client := kubefake.NewClientset()
	key := cache.ObjectName{Namespace: "default", Name: "web"}
	o := &owner{keys: []cache.ObjectName{key}}
	r := start(t, newShards(t, client, "a"), o)
	_, finish := startRound(t, r, key)
	lease := BucketLease("podpilot", shard.Bucket(key.Namespace, key.Name, 6))
	r.stop()
	waitFor(t, "the key's rounds stopped", func() bool {
		_, next, ok := r.s.Own(key)
		if ok {
			next() // a round that started before the stop, done at once
		}
		return !ok
	})
	if h := holder(t, client, lease); h != "a" {
		t.Fatalf("Lease holder = %q while a round is in flight, want it still held by a", h)
	}
	finish()
	if <-r.done; r.err != nil {
		t.Fatalf("Run = %v", r.err)
	}
	if !o.forgotten(key) {
		t.Error("the key was not forgotten at shutdown")
	}
	if h := holder(t, client, lease); h != "" {
		t.Errorf("Lease holder after shutdown = %q, want it released", h)
	}
}

func holder(t *testing.T, client *kubefake.Clientset, name string) string {
	l, err := client.CoordinationV1().Leases("podpilot-system").Get(t.Context(), name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	client := kubefake.NewClientset()
	good := Config{Client: client.CoordinationV1(), Namespace: "ns", Name: "podpilot", Shards: 2, Identity: "a",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	cases := []struct {
		name   string
		change func(*Config)
	}{
		{"one shard is the single Lease, not a shard election", func(c *Config) { c.Shards = 1 }},
		{"an identity is required", func(c *Config) { c.Identity = "" }},
		{"the renew deadline must be shorter than the lease", func(c *Config) { c.RenewDeadline = c.LeaseDuration }},
		{"a name is required", func(c *Config) { c.Name = "" }},
	}
	if _, err := New(good); err != nil {
		t.Fatalf("New(good) = %v", err)
	}
	for _, c := range cases {
		cfg := good
		c.change(&cfg)
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: New = %v, want ErrInvalidConfig", c.name, err)
		}
	}
}

// TestAnExpiredLeaseIsClaimedOnceItHasBeenWatchedForALeaseDuration: a replica that has watched a
// dead replica's Leases take no renewal for a lease duration (by its own clock) claims them at
// once, conditioned on the listed resourceVersion, instead of starting an elector that would
// wait a further lease duration from its own first look (the e2e handover took two).
func TestAnExpiredLeaseIsClaimedOnceItHasBeenWatchedForALeaseDuration(t *testing.T) {
	const leaseDuration = time.Hour // an elector's own wait could never be what takes the Leases here
	dead := "z"
	var objs []runtime.Object
	for _, name := range []string{"podpilot-member-0", BucketLease("podpilot", 0), BucketLease("podpilot", 1)} {
		objs = append(objs, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: "podpilot-system", Name: name, ResourceVersion: "7"},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &dead, LeaseDurationSeconds: ptr.To[int32](3600),
				RenewTime: &metav1.MicroTime{Time: time.Now().Add(24 * time.Hour)}}, // z's clock runs a day ahead: only this replica's own watch can expire them
		})
	}
	client := kubefake.NewClientset(objs...)
	var mu sync.Mutex
	claims := map[string]string{} // Lease → resourceVersion of the update that made "a" its holder over z
	client.PrependReactor("update", "leases", func(a clienttesting.Action) (bool, runtime.Object, error) {
		l := a.(clienttesting.UpdateAction).GetObject().(*coordinationv1.Lease)
		if ptr.Deref(l.Spec.HolderIdentity, "") == "a" && ptr.Deref(l.Spec.LeaseTransitions, 0) == 1 {
			mu.Lock()
			claims[l.Name] = l.ResourceVersion
			mu.Unlock()
		}
		return false, nil, nil
	})
	clk := clocktesting.NewFakePassiveClock(time.Now())
	s, err := New(Config{Client: client.CoordinationV1(), Namespace: "podpilot-system", Name: "podpilot", Shards: 2, Identity: "a",
		LeaseDuration: leaseDuration, RenewDeadline: 40 * time.Minute, RetryPeriod: 50 * time.Millisecond, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	r := start(t, s, &owner{})
	waitFor(t, "a member slot of its own beside z's", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(held(s.members)) == 1
	})
	if h := r.s.Held(); len(h) != 0 {
		t.Fatalf("held %v while z's Leases were watched for less than a lease duration; want none", h)
	}
	clk.SetTime(clk.Now().Add(leaseDuration + time.Second))
	waitFor(t, "both of z's buckets claimed and held", func() bool { return len(r.s.Held()) == 2 })
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{BucketLease("podpilot", 0), BucketLease("podpilot", 1)} {
		if claims[name] != "7" {
			t.Errorf("Lease %s claimed with resourceVersion %q, want the listed %q (a conditional update)", name, claims[name], "7")
		}
	}
}
