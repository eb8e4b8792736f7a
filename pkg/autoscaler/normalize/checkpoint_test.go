package normalize

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckpointDatesTheNewestRunByItsStartAndReadsBackAsMadeUntilTheLastRound(t *testing.T) {
	recs := []Recommendation{{Replicas: 5, Time: ago(time.Minute), Since: ago(5 * time.Minute)}, {Replicas: 3, Time: now, Since: ago(30 * time.Second)}}
	cp := Checkpoint(recs)
	want := []Recommendation{{Replicas: 5, Time: ago(time.Minute), Since: ago(5 * time.Minute)}, {Replicas: 3, Time: ago(30 * time.Second), Since: ago(30 * time.Second)}}
	if diff := cmp.Diff(want, cp); diff != "" {
		t.Errorf("Checkpoint (-want +got):\n%s", diff)
	}
	// Read back 15 s later: the newest counts as made until the round before (now), never earlier.
	back := FromCheckpoint(cp, now)
	want = []Recommendation{{Replicas: 5, Time: ago(time.Minute), Since: ago(5 * time.Minute)}, {Replicas: 3, Time: now, Since: ago(30 * time.Second)}}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Errorf("FromCheckpoint (-want +got):\n%s", diff)
	}
	if got := FromCheckpoint(cp, ago(time.Hour)); !got[1].Time.Equal(ago(30 * time.Second)) {
		t.Errorf("FromCheckpoint before the run started dates it %s, want its start", got[1].Time)
	}
}

// stabilizedBoth is the scale-down (highest) and scale-up (lowest) stabilization of desired over
// recs with the windows up and down.
func stabilizedBoth(recs []Recommendation, desired int32, up, down time.Duration, at time.Time) (hi, lo int32) {
	hi, lo = desired, desired
	for _, r := range recs {
		if r.Time.After(at.Add(-down)) {
			hi = max(hi, r.Replicas)
		}
		if r.Time.After(at.Add(-up)) {
			lo = min(lo, r.Replicas)
		}
	}
	return hi, lo
}

func TestFoldNeverLetsAWindowEndEarlier(t *testing.T) {
	// Seed 1..50: random runs one to three rounds apart, folded to 3..20 entries; every window
	// must hold at least the highest (scale-down) and at most the lowest (scale-up) of the runs.
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var recs []Recommendation
		at := now
		for range 20 + rng.IntN(60) {
			at = at.Add(time.Duration(1+rng.IntN(3)) * 15 * time.Second)
			recs = append(recs, Recommendation{Replicas: int32(1 + rng.IntN(9)), Time: at})
		}
		limit := 3 + rng.IntN(18)
		folded := Fold(recs, limit)
		if len(folded) > limit {
			t.Fatalf("seed %d: %d entries folded to %d, want at most %d", seed, len(recs), len(folded), limit)
		}
		for range 50 {
			window := time.Duration(rng.IntN(40)) * 15 * time.Second
			when := at.Add(time.Duration(rng.IntN(20)) * 15 * time.Second)
			desired := int32(1 + rng.IntN(9))
			hi, lo := stabilizedBoth(recs, desired, window, window, when)
			fhi, flo := stabilizedBoth(folded, desired, window, window, when)
			if fhi < hi || flo > lo {
				t.Fatalf("seed %d, window %s at +%s: folded holds %d/%d, the runs %d/%d", seed, window, when.Sub(at), fhi, flo, hi, lo)
			}
		}
	}
}

func TestFoldKeepsShortListsAndTheNewestRuns(t *testing.T) {
	recs := []Recommendation{{Replicas: 4, Time: ago(4 * time.Minute)}, {Replicas: 9, Time: ago(3 * time.Minute)},
		{Replicas: 2, Time: ago(2 * time.Minute)}, {Replicas: 5, Time: ago(time.Minute)}, {Replicas: 6, Time: now, Since: now}}
	if diff := cmp.Diff(recs, Fold(recs, 5)); diff != "" {
		t.Errorf("a list within the limit changed (-want +got):\n%s", diff)
	}
	want := []Recommendation{{Replicas: 9, Time: ago(2 * time.Minute)}, {Replicas: 2, Time: ago(2 * time.Minute)},
		{Replicas: 5, Time: ago(time.Minute)}, {Replicas: 6, Time: now, Since: now}}
	if diff := cmp.Diff(want, Fold(recs, 4)); diff != "" {
		t.Errorf("Fold to 4 (-want +got):\n%s", diff)
	}
}

func TestMergeKeepsWhatEitherSideRecorded(t *testing.T) {
	b := &Behavior{ScaleUp: &Rules{Policies: []Policy{podsPolicy(1, time.Minute)}}}
	exact := now.Add(-40*time.Second + 300*time.Millisecond)
	tests := []struct {
		name string
		x, y History
		want History
	}{{
		name: "a history merged with itself is itself",
		x: History{Recommendations: []Recommendation{{Replicas: 4, Time: ago(time.Minute)}, {Replicas: 6, Time: now, Since: ago(30 * time.Second)}},
			ScaleUpEvents: []ScaleEvent{{Change: 1, Time: ago(20 * time.Second)}}},
		y: History{Recommendations: []Recommendation{{Replicas: 4, Time: ago(time.Minute)}, {Replicas: 6, Time: now, Since: ago(30 * time.Second)}},
			ScaleUpEvents: []ScaleEvent{{Change: 1, Time: ago(20 * time.Second)}}},
		want: History{Recommendations: []Recommendation{{Replicas: 4, Time: ago(time.Minute)}, {Replicas: 6, Time: now, Since: ago(30 * time.Second)}},
			ScaleUpEvents: []ScaleEvent{{Change: 1, Time: ago(20 * time.Second)}}},
	}, {
		name: "an event and a run only the other side knows are kept",
		x:    History{Recommendations: []Recommendation{{Replicas: 6, Time: now, Since: ago(30 * time.Second)}}, ScaleUpEvents: []ScaleEvent{{Change: 1, Time: ago(20 * time.Second)}}},
		y:    History{Recommendations: []Recommendation{{Replicas: 8, Time: ago(2 * time.Minute)}}, ScaleUpEvents: []ScaleEvent{{Change: 2, Time: ago(50 * time.Second)}}},
		want: History{Recommendations: []Recommendation{{Replicas: 8, Time: ago(2 * time.Minute)}, {Replicas: 6, Time: now, Since: ago(30 * time.Second)}},
			ScaleUpEvents: []ScaleEvent{{Change: 2, Time: ago(50 * time.Second)}, {Change: 1, Time: ago(20 * time.Second)}}},
	}, {
		name: "an event written down at whole seconds is the same event as the exact one, counted once at the exact time",
		x:    History{ScaleUpEvents: []ScaleEvent{{Change: 1, Time: exact}}},
		y:    History{ScaleUpEvents: []ScaleEvent{{Change: 1, Time: CeilSecond(exact)}}},
		want: History{ScaleUpEvents: []ScaleEvent{{Change: 1, Time: exact}}},
	}, {
		name: "a run read back from a checkpoint and the same run in memory are one run, last made at the later time",
		x:    History{Recommendations: []Recommendation{{Replicas: 5, Time: exact}, {Replicas: 3, Time: now, Since: ago(10 * time.Second)}}},
		y:    History{Recommendations: []Recommendation{{Replicas: 5, Time: CeilSecond(exact)}, {Replicas: 3, Time: ago(5 * time.Second), Since: ago(10 * time.Second)}}},
		want: History{Recommendations: []Recommendation{{Replicas: 5, Time: CeilSecond(exact)}, {Replicas: 3, Time: now, Since: ago(10 * time.Second)}}},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Merge(tc.x, tc.y, b), cmpEmpty); diff != "" {
				t.Errorf("Merge (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(Merge(tc.x, tc.y, b), Merge(tc.y, tc.x, b), cmpEmpty); diff != "" {
				t.Errorf("Merge is not symmetric (-xy +yx):\n%s", diff)
			}
		})
	}
}

func TestCeilSecondRoundsUpOnlyWhatIsNotWhole(t *testing.T) {
	if got := CeilSecond(now); !got.Equal(now) {
		t.Errorf("CeilSecond(whole) = %s, want it unchanged", got)
	}
	if got := CeilSecond(now.Add(time.Millisecond)); !got.Equal(now.Add(time.Second)) {
		t.Errorf("CeilSecond(+1ms) = %s, want the next second", got)
	}
}
