package shard

import (
	"hash/fnv"
	"slices"
	"time"
)

// Bucket returns the bucket, in [0, n), of the PodAutoscaler namespace/name: FNV-1a of
// "namespace/name" modulo n. It hashes the name and not only the namespace, so that the
// PodAutoscalers of one namespace spread over every bucket. n < 1 is read as 1.
func Bucket(namespace, name string, n int) int {
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(namespace))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write([]byte(name))
	return int(h.Sum32() % uint32(n)) //nolint:gosec // n > 1 and an int: the modulo fits
}

// StartOf returns where the replica self begins its preference among n Leases (see Pool.Start).
func StartOf(self string, n int) int { return Bucket("", self, n) }

// Lease is one Lease as the policy reads it: its holder and when the holder last renewed it,
// for how long. The zero Lease is free.
type Lease struct {
	Holder    string
	RenewTime time.Time
	Duration  time.Duration
}

// Held reports whether l has a holder whose term has not run out at now. A Lease without a
// holder (never taken, or released) or whose renew time is older than its duration is free.
func (l Lease) Held(now time.Time) bool {
	return l.Holder != "" && now.Before(l.RenewTime.Add(l.Duration))
}

// Live returns how many distinct replicas hold one of leases at now.
func Live(leases []Lease, now time.Time) int {
	seen := map[string]bool{}
	for _, l := range leases {
		if l.Held(now) {
			seen[l.Holder] = true
		}
	}
	return len(seen)
}

// FairShare returns how many of buckets one of live replicas may hold: ceil(buckets / live), so
// that live replicas together cover every bucket. With no live replica it is every bucket.
func FairShare(buckets, live int) int {
	if live < 1 {
		return buckets
	}
	return (buckets + live - 1) / live
}

// Pool is one replica's view of a set of Leases it competes for: the Leases by index, which
// of them it holds and which it is trying to acquire, and how many it wants.
type Pool struct {
	// Leases are the Leases of the pool, by index; a missing Lease is the zero Lease.
	Leases []Lease
	// Self is this replica's identity.
	Self string
	// Held and Trying are the indexes this replica holds and the ones it campaigns for.
	Held, Trying []int
	// Want is how many of the Leases this replica should hold.
	Want int
	// Start is where this replica's preference begins (e.g. a hash of Self): it prefers the
	// Leases from Start on, cyclically, so that replicas starting together try different ones.
	Start int
}

// Moves is what a replica does next in a pool.
type Moves struct {
	// Try are free Leases to campaign for.
	Try []int
	// Abandon are campaigns to stop: another replica holds the Lease, or this replica tries
	// more than it wants.
	Abandon []int
	// Release are held Leases to give up because this replica holds more than it wants.
	Release []int
}

// Plan returns the moves that bring p toward Want held Leases at now:
//   - it releases the held Leases above Want, the last in its preference first;
//   - it abandons campaigns for Leases another replica holds, then those above Want;
//   - while it holds and tries fewer than Want, it tries free Leases (no holder, or expired), the
//     first in its preference first.
func Plan(p Pool, now time.Time) Moves {
	var m Moves
	order := p.preference()
	held := p.inOrder(order, p.Held)
	if extra := len(held) - max(p.Want, 0); extra > 0 {
		m.Release = slices.Clone(held[len(held)-extra:])
		held = held[:len(held)-extra]
	}
	var trying []int
	for _, i := range p.inOrder(order, p.Trying) {
		if l := p.lease(i); l.Held(now) && l.Holder != p.Self {
			m.Abandon = append(m.Abandon, i)
			continue
		}
		trying = append(trying, i)
	}
	if extra := len(held) + len(trying) - max(p.Want, 0); extra > 0 {
		m.Abandon = append(m.Abandon, trying[len(trying)-extra:]...)
		trying = trying[:len(trying)-extra]
	}
	busy := map[int]bool{}
	for _, i := range append(slices.Clone(p.Held), p.Trying...) {
		busy[i] = true
	}
	for _, i := range order {
		if len(held)+len(trying)+len(m.Try) >= p.Want {
			break
		}
		if !busy[i] && !p.lease(i).Held(now) {
			m.Try = append(m.Try, i)
		}
	}
	return m
}

// preference returns the pool's indexes from Start on, cyclically.
func (p Pool) preference() []int {
	n := len(p.Leases)
	if n == 0 {
		return nil
	}
	order := make([]int, 0, n)
	for k := range n {
		order = append(order, ((p.Start%n+n)%n+k)%n)
	}
	return order
}

// inOrder returns the members of set that are in order, in that order.
func (p Pool) inOrder(order, set []int) []int {
	var out []int
	for _, i := range order {
		if slices.Contains(set, i) {
			out = append(out, i)
		}
	}
	return out
}

func (p Pool) lease(i int) Lease {
	if i < 0 || i >= len(p.Leases) {
		return Lease{}
	}
	return p.Leases[i]
}
