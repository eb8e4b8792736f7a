package normalize

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// upstreamStabilized is the reference: upstream's stabilization over its per-round list, every
// recommendation kept with the round that made it (stabilizeRecommendation and
// stabilizeRecommendationWithBehaviors in kube-controller-manager).
func upstreamStabilized(list []Recommendation, b *Behavior, downscaleWindow time.Duration, current, desired int32, now time.Time) int32 {
	if b == nil {
		highest := desired
		for _, r := range list {
			if !r.Time.Before(now.Add(-downscaleWindow)) {
				highest = max(highest, r.Replicas)
			}
		}
		return highest
	}
	up, down := b.Resolve(downscaleWindow)
	upRec, downRec := desired, desired
	for _, r := range list {
		if r.Time.After(now.Add(-up.window())) {
			upRec = min(upRec, r.Replicas)
		}
		if r.Time.After(now.Add(-down.window())) {
			downRec = max(downRec, r.Replicas)
		}
	}
	return min(max(current, upRec), downRec)
}

// step is a recommendation made for a number of consecutive rounds.
type step struct {
	replicas int32
	rounds   int
}

func expand(steps []step) []int32 {
	var out []int32
	for _, s := range steps {
		for range s.rounds {
			out = append(out, s.replicas)
		}
	}
	return out
}

// randomWalk is a deterministic sequence of recommendations between 1 and 9 that holds each value
// for a random number of rounds.
// withOutages replaces a random stretch of rounds, every few dozen rounds, by rounds that make
// no recommendation.
func withOutages(desired []int32, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, seed))
	out := slices.Clone(desired)
	for i := rng.IntN(30); i < len(out); i += 20 + rng.IntN(40) {
		for j := i; j < min(len(out), i+1+rng.IntN(30)); j++ {
			out[j] = noRecommendation
		}
	}
	return out
}

func randomWalk(seed uint64, n int) []int32 {
	rng := rand.New(rand.NewPCG(seed, seed))
	out := make([]int32, 0, n)
	v := int32(5)
	for len(out) < n {
		for range 1 + rng.IntN(6) {
			out = append(out, v)
		}
		v = min(max(v+int32(rng.IntN(5))-2, 1), 9)
	}
	return out[:n]
}

// roundsResult is what a sequence of rounds produced with runs and with upstream's list.
type roundsResult struct {
	stabilized, upstream []int32
	historyChanges       int
	valueChanges         int
}

// noRecommendation is a round whose metrics failed: it records nothing, as upstream.
const noRecommendation = -1

// runRounds makes one round every interval with each desired value (noRecommendation: a round
// that makes none), starting at current 5 and the history start (upstream's list holds the same
// entries), and records the stabilized recommendation from the runs and from upstream's per-round
// list. The current replicas follow the runs' decisions. A round that changes the checkpoint
// (see Checkpoint) counts as a history change.
func runRounds(desired []int32, b *Behavior, window, interval time.Duration, start History) roundsResult {
	var res roundsResult
	h := start
	list := append([]Recommendation(nil), start.Recommendations...)
	current := int32(5)
	t := now
	prev := int32(noRecommendation)
	for _, d := range desired {
		if d == noRecommendation {
			res.stabilized, res.upstream = append(res.stabilized, noRecommendation), append(res.upstream, noRecommendation)
			t = t.Add(interval)
			continue
		}
		if len(list) == 0 {
			list = []Recommendation{{Replicas: current, Time: t}}
		}
		res.upstream = append(res.upstream, upstreamStabilized(list, b, window, current, d, t))
		list = append(list, Recommendation{Replicas: d, Time: t})

		r := Normalize(Input{Current: current, Desired: d, Min: 1, Max: 100, Behavior: b,
			DownscaleStabilizationWindow: window, History: h, Now: t})
		res.stabilized = append(res.stabilized, r.Stabilized)
		if !slices.Equal(Checkpoint(r.History.Recommendations), Checkpoint(h.Recommendations)) {
			res.historyChanges++
		}
		if d != prev {
			res.valueChanges++
			prev = d
		}
		h, current = r.History, r.Replicas
		t = t.Add(interval)
	}
	return res
}

func TestRunsStabilizeAsUpstreamsPerRoundList(t *testing.T) {
	const interval = 15 * time.Second
	upDown := func(up, down time.Duration) *Behavior {
		return &Behavior{ScaleUp: &Rules{StabilizationWindow: &up}, ScaleDown: &Rules{StabilizationWindow: &down}}
	}
	behaviors := []struct {
		name     string
		behavior *Behavior
		window   time.Duration
	}{
		{"legacy, 5m downscale window", nil, 5 * time.Minute},
		{"legacy, 1m downscale window", nil, time.Minute},
		{"legacy, 20s window, not a multiple of the interval", nil, 20 * time.Second},
		{"legacy, no window", nil, 0},
		{"behavior defaults: no up window, 5m down window", &Behavior{}, 5 * time.Minute},
		{"behavior: 30s up and 1m down windows", upDown(30*time.Second, time.Minute), 5 * time.Minute},
		{"behavior: 40s up and 25s down windows, not multiples of the interval", upDown(40*time.Second, 25*time.Second), 0},
		{"behavior: no windows", upDown(0, 0), 0},
	}
	sequences := []struct {
		name    string
		desired []int32
	}{
		{"steady at 5 for an hour, then 3", expand([]step{{5, 240}, {3, 40}})},
		{"steady, one round of a spike, steady", expand([]step{{4, 30}, {9, 1}, {4, 40}})},
		{"alternating every round", expand([]step{{5, 1}, {3, 1}, {5, 1}, {3, 1}, {6, 1}, {2, 1}, {6, 1}, {2, 30}})},
		{"a staircase down then up", expand([]step{{9, 5}, {8, 5}, {7, 5}, {6, 5}, {5, 5}, {6, 5}, {7, 5}, {8, 30}})},
		{"random walk 1", randomWalk(1, 400)},
		{"random walk 2", randomWalk(2, 400)},
		{"random walk 3", randomWalk(3, 400)},
		// Issue 22: upstream records nothing while metrics fail, so 9 ages out during an outage
		// longer than the window; a run must not stretch over the rounds that made nothing.
		{"9, a 10-minute outage, then 3", expand([]step{{9, 20}, {noRecommendation, 40}, {3, 30}})},
		{"an outage inside a run of one value", expand([]step{{6, 10}, {noRecommendation, 30}, {6, 3}, {2, 30}})},
		{"random walk with outages", withOutages(randomWalk(4, 400), 4)},
	}
	for _, b := range behaviors {
		for _, s := range sequences {
			t.Run(b.name+"/"+s.name, func(t *testing.T) {
				got := runRounds(s.desired, b.behavior, b.window, interval, History{})
				for i := range got.upstream {
					if got.stabilized[i] != got.upstream[i] {
						t.Fatalf("round %d (desired %d): runs stabilize to %d, upstream's list to %d",
							i, s.desired[i], got.stabilized[i], got.upstream[i])
					}
				}
				if got.historyChanges > got.valueChanges {
					t.Errorf("history changed in %d rounds, the recommendation in only %d", got.historyChanges, got.valueChanges)
				}
			})
		}
	}
}

func TestSteadyRecommendationHoldsAScaleDownForTheWholeWindow(t *testing.T) {
	// Steady at 5 for an hour, then 3 every round: never below 5 while a round of 5 is in the
	// window. Upstream's legacy window includes its cutoff, the behavior's excludes it.
	const interval = 15 * time.Second
	desired := expand([]step{{5, 240}, {3, 40}})
	tests := []struct {
		name      string
		behavior  *Behavior
		firstDown int // the first round that may apply 3
	}{
		{name: "without behavior, 3 applies once the last 5 is more than the 5m window old", firstDown: 240 + 20},
		{name: "with behavior, 3 applies once the last 5 is no longer after the window's start", behavior: &Behavior{}, firstDown: 240 + 19},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runRounds(desired, tc.behavior, 5*time.Minute, interval, History{})
			for i, s := range got.stabilized {
				want := int32(5)
				if i >= tc.firstDown {
					want = 3
				}
				if s != want {
					t.Errorf("round %d (%s after the first 3): stabilized %d, want %d", i,
						time.Duration(i-240)*interval, s, want)
				}
			}
			if got.historyChanges != 2 {
				t.Errorf("history changed in %d rounds, want 2 (seeded at the first round, and when 3 was first recommended)", got.historyChanges)
			}
		})
	}
}

func TestPerRoundListsFromOlderVersionsReadAsRuns(t *testing.T) {
	// An older podpilot persisted one entry per round: those are one-round runs, and the
	// newest, read back as still made until the previous round, is the last entry of upstream's
	// list, so the next rounds stabilize exactly as upstream's list.
	const interval = 15 * time.Second
	var old []Recommendation
	for i := 20; i >= 1; i-- {
		old = append(old, Recommendation{Replicas: int32(3 + i%4), Time: now.Add(-time.Duration(i) * interval)})
	}
	for _, b := range []*Behavior{nil, {}} {
		got := runRounds(expand([]step{{2, 40}}), b, 5*time.Minute, interval, History{Recommendations: FromCheckpoint(old, now.Add(-interval))})
		for i := range got.upstream {
			if got.stabilized[i] != got.upstream[i] {
				t.Fatalf("behavior %v, round %d: runs stabilize to %d, upstream's list to %d", b != nil, i, got.stabilized[i], got.upstream[i])
			}
		}
	}
}
