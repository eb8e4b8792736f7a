package shard

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func held(by string) Lease {
	return Lease{Holder: by, RenewTime: now.Add(-time.Second), Duration: 15 * time.Second}
}
func expired(by string) Lease {
	return Lease{Holder: by, RenewTime: now.Add(-16 * time.Second), Duration: 15 * time.Second}
}

func TestBucketSpreadsOneNamespaceOverEveryBucket(t *testing.T) {
	const n = 6
	counts := make([]int, n)
	for i := range 6000 {
		b := Bucket("team-a", fmt.Sprintf("pa-%d", i), n)
		if b < 0 || b >= n {
			t.Fatalf("bucket %d out of [0, %d)", b, n)
		}
		counts[b]++
	}
	for b, c := range counts {
		if c < 800 || c > 1200 { // 1000 each, ±20 %
			t.Errorf("bucket %d holds %d of one namespace's 6000 PodAutoscalers, want about 1000 (all: %v)", b, c, counts)
		}
	}
}

func TestBucketRules(t *testing.T) {
	cases := []struct {
		name    string
		ns, pa  string
		n, want int
	}{
		{name: "one bucket holds everything", ns: "a", pa: "b", n: 1, want: 0},
		{name: "a count below one is read as one", ns: "a", pa: "b", n: 0, want: 0},
		{name: "the hash is FNV-1a of namespace/name (fnv1a32(\"default/web\") % 6)", ns: "default", pa: "web", n: 6, want: int(fnv1a("default/web") % 6)},
	}
	for _, c := range cases {
		if got := Bucket(c.ns, c.pa, c.n); got != c.want {
			t.Errorf("%s: Bucket = %d, want %d", c.name, got, c.want)
		}
	}
}

// fnv1a is FNV-1a 32 written out, to pin the hash the buckets of running replicas agree on.
func fnv1a(s string) uint32 {
	h := uint32(2166136261)
	for i := range len(s) {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

func TestLiveReplicasAreTheDistinctHoldersOfUnexpiredLeases(t *testing.T) {
	cases := []struct {
		name   string
		leases []Lease
		want   int
	}{
		{"no Lease, no replica", nil, 0},
		{"a free Lease counts no one", []Lease{{}}, 0},
		{"a replica holding two Leases counts once", []Lease{held("a"), held("a"), held("b")}, 2},
		{"an expired holder is not live", []Lease{held("a"), expired("b")}, 1},
		{"a Lease renewed exactly its duration ago has expired", []Lease{{Holder: "a", RenewTime: now.Add(-15 * time.Second), Duration: 15 * time.Second}}, 0},
	}
	for _, c := range cases {
		if got := Live(c.leases, now); got != c.want {
			t.Errorf("%s: Live = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestFairShareIsTheCeilingOfBucketsOverLiveReplicas(t *testing.T) {
	cases := []struct {
		name                string
		buckets, live, want int
	}{
		{"six buckets over three replicas: two each", 6, 3, 2},
		{"six buckets over two replicas: three each", 6, 2, 3},
		{"six buckets over four replicas: rounded up, so that they cover every bucket", 6, 4, 2},
		{"more replicas than buckets: one each", 3, 5, 1},
		{"no live replica (this one not yet counted): every bucket", 6, 0, 6},
	}
	for _, c := range cases {
		if got := FairShare(c.buckets, c.live); got != c.want {
			t.Errorf("%s: FairShare(%d, %d) = %d, want %d", c.name, c.buckets, c.live, got, c.want)
		}
	}
}

func TestPlanRules(t *testing.T) {
	free := Lease{}
	cases := []struct {
		name string
		pool Pool
		want Moves
	}{
		{
			name: "a replica holding nothing tries its share of free Leases, from its start on",
			pool: Pool{Leases: []Lease{free, free, free, free, free, free}, Self: "a", Want: 2, Start: 4},
			want: Moves{Try: []int{4, 5}},
		},
		{
			name: "an expired Lease is free to try; a held one is not",
			pool: Pool{Leases: []Lease{held("b"), expired("c"), held("b"), free}, Self: "a", Want: 2},
			want: Moves{Try: []int{1, 3}},
		},
		{
			name: "holding its share, a replica tries nothing",
			pool: Pool{Leases: []Lease{held("a"), held("a"), free}, Self: "a", Held: []int{0, 1}, Want: 2},
			want: Moves{},
		},
		{
			name: "campaigns count toward the share: no second try for the same gap",
			pool: Pool{Leases: []Lease{held("a"), free, free}, Self: "a", Held: []int{0}, Trying: []int{1}, Want: 2},
			want: Moves{},
		},
		{
			name: "above its share (a replica came back), it releases the last held in its preference",
			pool: Pool{Leases: []Lease{held("a"), held("a"), held("a")}, Self: "a", Held: []int{0, 1, 2}, Want: 2, Start: 1},
			want: Moves{Release: []int{0}},
		},
		{
			name: "a campaign for a Lease another replica took is abandoned, and another free one tried",
			pool: Pool{Leases: []Lease{held("b"), free}, Self: "a", Trying: []int{0}, Want: 1},
			want: Moves{Abandon: []int{0}, Try: []int{1}},
		},
		{
			name: "a campaign that just won (this replica is the holder) is kept",
			pool: Pool{Leases: []Lease{held("a"), free}, Self: "a", Trying: []int{0}, Want: 1},
			want: Moves{},
		},
		{
			name: "campaigns above the share are abandoned, the last in preference first",
			pool: Pool{Leases: []Lease{held("a"), free, free}, Self: "a", Held: []int{0}, Trying: []int{1, 2}, Want: 2},
			want: Moves{Abandon: []int{2}},
		},
		{
			name: "wanting none (no member slot), it releases all and abandons all",
			pool: Pool{Leases: []Lease{held("a"), free}, Self: "a", Held: []int{0}, Trying: []int{1}},
			want: Moves{Release: []int{0}, Abandon: []int{1}},
		},
		{
			name: "no Leases, no moves",
			pool: Pool{Self: "a", Want: 2},
			want: Moves{},
		},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, Plan(c.pool, now)); diff != "" {
			t.Errorf("%s: moves (-want +got):\n%s", c.name, diff)
		}
	}
}

func TestAReturningReplicaGetsBucketsBack(t *testing.T) {
	free := Lease{}
	// a and b hold three each; c comes back and holds a member slot: three live replicas.
	members := []Lease{held("a"), held("b"), held("c")}
	share := FairShare(6, Live(members, now))
	a := Plan(Pool{Leases: []Lease{held("a"), held("a"), held("a"), held("b"), held("b"), held("b")}, Self: "a",
		Held: []int{0, 1, 2}, Want: share}, now)
	if len(a.Release) != 1 {
		t.Fatalf("a releases %v, want one bucket for the returning replica", a.Release)
	}
	c := Plan(Pool{Leases: []Lease{held("a"), held("a"), free, held("b"), held("b"), free}, Self: "c", Want: share, Start: 3}, now)
	if diff := cmp.Diff([]int{5, 2}, c.Try); diff != "" {
		t.Errorf("the returning replica tries (-want +got):\n%s", diff)
	}
}
