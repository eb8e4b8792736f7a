package election

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/podpilot/podpilot/pkg/autoscaler/shard"
)

// ErrInvalidConfig means a required Config field is missing or out of range.
var ErrInvalidConfig = errors.New("invalid shard election config")

// Owner is the controller as the shards drive it. Adopt queues the PodAutoscalers owns matches,
// those of a bucket just gained; Forget drops what is known of them, once the bucket's rounds
// have stopped.
type Owner interface {
	Adopt(ctx context.Context, owns func(cache.ObjectName) bool)
	Forget(ctx context.Context, owns func(cache.ObjectName) bool)
}

// Config is everything New needs.
type Config struct {
	// Client reads and writes the Leases.
	Client coordinationv1client.LeasesGetter
	// Namespace and Name place the Leases: bucket i is <Name>-<i>, member slot j <Name>-member-<j>.
	Namespace, Name string
	// Shards is the number of buckets, at least 2 (one bucket is the single Lease of app's lead).
	Shards int
	// Identity is this replica's holder identity, unique per process.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's leader election timings; the
	// plan is made again every RetryPeriod.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Clock times this replica's observations of the Leases (when it first saw each record), by
	// which a Lease expires; nil means the real clock.
	Clock clock.PassiveClock
}

// Shards holds this replica's share of the buckets (see package shard). A replica first holds
// one member slot, which counts it as live; then it tries free buckets while it holds fewer
// than its fair share and releases those above it, so that load spreads and moves back to a
// replica that returns.
type Shards struct {
	cfg              Config
	owner            Owner
	mu               sync.Mutex
	buckets, members []*slot
	campaigns        sync.WaitGroup
	// seen is when this replica first listed each Lease's current record (by resourceVersion).
	// A Lease expires a lease duration after that, by this replica's clock alone, as client-go's
	// elector judges it: never by the holder's renew time, so that clock skew between replicas
	// cannot make a live holder's Lease look expired.
	seen map[string]seenRecord
}

// seenRecord is one Lease record as this replica first listed it.
type seenRecord struct {
	resourceVersion string
	at              time.Time
}

// slot is one Lease this replica tries or holds.
type slot struct {
	name string
	// cancel ends the campaign; while leading, only once the term has stopped (it releases the Lease).
	cancel context.CancelFunc
	// term is set while this replica holds the Lease.
	term *term
}

// term is one tenure of a bucket: the rounds of its PodAutoscalers run under ctx, and stop
// waits for those in flight.
type term struct {
	ctx     context.Context
	stop    context.CancelFunc
	rounds  sync.WaitGroup
	stopped bool
}

// New returns the Shards of cfg.
func New(cfg Config) (*Shards, error) {
	if cfg.Client == nil || cfg.Name == "" || cfg.Identity == "" || cfg.Shards < 2 ||
		cfg.RetryPeriod <= 0 || cfg.RenewDeadline <= 0 || cfg.LeaseDuration <= cfg.RenewDeadline {
		return nil, fmt.Errorf("client, name, identity, at least 2 shards and valid timings are required: %w", ErrInvalidConfig)
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	s := &Shards{cfg: cfg, seen: map[string]seenRecord{}}
	for i := range cfg.Shards {
		s.buckets = append(s.buckets, &slot{name: BucketLease(cfg.Name, i)})
		s.members = append(s.members, &slot{name: fmt.Sprintf("%s-member-%d", cfg.Name, i)})
	}
	return s, nil
}

// BucketLease returns the name of bucket i's Lease.
func BucketLease(name string, i int) string { return fmt.Sprintf("%s-%d", name, i) }

// Own reports whether this replica holds key's bucket. If it does, the round of key runs under
// ctx, which ends when the bucket is lost, and calls done when it has ended; the bucket's
// PodAutoscalers are forgotten only after every such round is done.
func (s *Shards) Own(key cache.ObjectName) (ctx context.Context, done func(), ok bool) {
	b := shard.Bucket(key.Namespace, key.Name, s.cfg.Shards)
	s.mu.Lock()
	defer s.mu.Unlock()
	tm := s.buckets[b].term
	if tm == nil || tm.stopped {
		return nil, nil, false
	}
	tm.rounds.Add(1)
	return tm.ctx, tm.rounds.Done, true
}

// Identity returns this replica's holder identity in the Leases.
func (s *Shards) Identity() string { return s.cfg.Identity }

// Held returns the buckets this replica holds.
func (s *Shards) Held() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return held(s.buckets)
}

// Run plans every RetryPeriod until ctx is done, telling owner about the buckets gained and
// lost, then stops the rounds of every bucket held, forgets them and releases the Leases, and
// returns once every campaign has ended. Call it once.
func (s *Shards) Run(ctx context.Context, owner Owner) error {
	if owner == nil {
		return fmt.Errorf("an owner is required: %w", ErrInvalidConfig)
	}
	s.mu.Lock()
	s.owner = owner
	s.mu.Unlock()
	base := context.WithoutCancel(ctx) // campaigns outlive ctx: a term stops its rounds before its Lease is released
	wait.UntilWithContext(ctx, func(ctx context.Context) { s.step(ctx, base) }, s.cfg.RetryPeriod)
	s.mu.Lock()
	for _, sl := range slices.Concat(s.buckets, s.members) {
		sl.end()
	}
	s.mu.Unlock()
	s.campaigns.Wait()
	return nil
}

// step lists the Leases and applies the plan: one member slot, then the fair share of buckets.
func (s *Shards) step(ctx context.Context, base context.Context) {
	list, err := s.cfg.Client.Leases(s.cfg.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		klog.FromContext(ctx).Error(err, "Listing the autoscaler's Leases failed; keeping the buckets held", "namespace", s.cfg.Namespace)
		return
	}
	now := s.cfg.Clock.Now()
	byName := map[string]coordinationv1.Lease{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range list.Items {
		byName[l.Name] = l
		if r, ok := s.seen[l.Name]; !ok || r.resourceVersion != l.ResourceVersion {
			s.seen[l.Name] = seenRecord{resourceVersion: l.ResourceVersion, at: now}
		}
	}
	members, buckets := s.leasesOf(byName, s.members), s.leasesOf(byName, s.buckets)
	start := shard.StartOf(s.cfg.Identity, s.cfg.Shards)
	s.apply(base, byName, s.members, nil, shard.Plan(shard.Pool{Leases: members, Self: s.cfg.Identity,
		Held: held(s.members), Trying: trying(s.members), Want: 1, Start: start}, now))
	want := 0
	if len(held(s.members)) > 0 {
		want = shard.FairShare(s.cfg.Shards, max(shard.Live(members, now), 1))
	}
	s.apply(base, byName, s.buckets, s.owner, shard.Plan(shard.Pool{Leases: buckets, Self: s.cfg.Identity,
		Held: held(s.buckets), Trying: trying(s.buckets), Want: want, Start: start}, now))
}

// apply carries out m on slots; byName are the Leases as listed. A Lease to try that another
// replica held and let expire is claimed first (see campaign). s.mu is held.
func (s *Shards) apply(base context.Context, byName map[string]coordinationv1.Lease, slots []*slot, owner Owner, m shard.Moves) {
	for _, i := range append(m.Release, m.Abandon...) {
		slots[i].end()
	}
	for _, i := range m.Try {
		var owns func(cache.ObjectName) bool
		if owner != nil {
			owns = func(key cache.ObjectName) bool { return shard.Bucket(key.Namespace, key.Name, s.cfg.Shards) == i }
		}
		var claim *coordinationv1.Lease
		if l, ok := byName[slots[i].name]; ok && ptr.Deref(l.Spec.HolderIdentity, "") != "" && *l.Spec.HolderIdentity != s.cfg.Identity {
			claim = l.DeepCopy()
		}
		ctx, cancel := context.WithCancel(base)
		slots[i].cancel = cancel
		s.campaigns.Go(func() { s.campaign(ctx, cancel, slots[i], claim, owner, owns) })
	}
}

// end stops sl: the term's rounds if it leads (its campaign then releases the Lease), else the
// campaign. s.mu is held.
func (sl *slot) end() {
	switch {
	case sl.term != nil:
		sl.term.stop()
	case sl.cancel != nil:
		sl.cancel()
	}
}

func held(slots []*slot) []int {
	var out []int
	for i, sl := range slots {
		if sl.term != nil {
			out = append(out, i)
		}
	}
	return out
}

func trying(slots []*slot) []int {
	var out []int
	for i, sl := range slots {
		if sl.cancel != nil && sl.term == nil {
			out = append(out, i)
		}
	}
	return out
}

// leasesOf returns the Leases of slots as package shard reads them, renewed when this replica
// first saw their current record; a missing one is free. s.mu is held.
func (s *Shards) leasesOf(byName map[string]coordinationv1.Lease, slots []*slot) []shard.Lease {
	out := make([]shard.Lease, len(slots))
	for i, sl := range slots {
		l, ok := byName[sl.name]
		if !ok || l.Spec.HolderIdentity == nil {
			continue
		}
		out[i].Holder = *l.Spec.HolderIdentity
		out[i].RenewTime = s.seen[sl.name].at
		if l.Spec.LeaseDurationSeconds != nil {
			out[i].Duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
		}
	}
	return out
}
