package normalize

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// floorRound is one round of the forecast's floor: raw asked for at now + at.
type floorRound struct {
	at  time.Duration
	raw int32
}

// holdFloors runs the rounds through HoldFloor with a 10-minute window, from no floors, and
// returns the floor held at each round and the floors remembered after the last.
func holdFloors(rounds []floorRound) ([]int32, []Recommendation) {
	var floors []Recommendation
	var held []int32
	for _, r := range rounds {
		var h int32
		h, floors = HoldFloor(floors, r.raw, 10*time.Minute, now.Add(r.at))
		held = append(held, h)
	}
	return held, floors
}

func TestTheFloorRisesAtOnce(t *testing.T) {
	tests := []struct {
		name   string
		rounds []floorRound
		want   []int32
	}{{
		name:   "a first floor is the forecast's",
		rounds: []floorRound{{0, 7}},
		want:   []int32{7},
	}, {
		name:   "a higher floor is held from its first round, however recent the lower one",
		rounds: []floorRound{{0, 5}, {15 * time.Second, 6}, {30 * time.Second, 9}},
		want:   []int32{5, 6, 9},
	}, {
		name:   "a floor above one held by the window rises at once",
		rounds: []floorRound{{0, 8}, {15 * time.Second, 5}, {30 * time.Second, 9}},
		want:   []int32{8, 8, 9},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := holdFloors(tt.rounds)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("held floors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheFloorFallsOnlyAfterItsWindow(t *testing.T) {
	tests := []struct {
		name   string
		rounds []floorRound
		want   []int32
	}{{
		name: "a floor wavering by one replica holds its top (the flapping seen in bench p's diurnal plateau)",
		rounds: []floorRound{{0, 23}, {15 * time.Second, 22}, {30 * time.Second, 23}, {45 * time.Second, 22},
			{time.Minute, 21}, {5 * time.Minute, 22}},
		want: []int32{23, 23, 23, 23, 23, 23},
	}, {
		name:   "a lower floor holds the higher one exactly until the window has passed since it was last asked for",
		rounds: []floorRound{{0, 9}, {5 * time.Minute, 9}, {15 * time.Minute, 6}, {15*time.Minute + time.Second, 6}},
		want:   []int32{9, 9, 9, 6},
	}, {
		name: "it falls step by step, to the highest floor still within the window",
		rounds: []floorRound{{0, 9}, {time.Minute, 8}, {2 * time.Minute, 7}, {10*time.Minute + time.Second, 5},
			{11*time.Minute + time.Second, 5}, {12*time.Minute + time.Second, 5}},
		want: []int32{9, 9, 9, 8, 7, 5},
	}, {
		name:   "a round without a forecast (floor 0) forgets the floors: nothing holds what no forecast asks for",
		rounds: []floorRound{{0, 9}, {15 * time.Second, 0}, {30 * time.Second, 4}},
		want:   []int32{9, 0, 4},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := holdFloors(tt.rounds)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("held floors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheFloorsAreAStaircaseOfAtMostOneEntryPerCount(t *testing.T) {
	// An hour of rounds wavering between 20 and 24 keeps no more than the five counts.
	var rounds []floorRound
	for i := range 240 {
		rounds = append(rounds, floorRound{time.Duration(i) * 15 * time.Second, int32(20 + (i*7)%5)})
	}
	_, floors := holdFloors(rounds)
	if len(floors) > 5 {
		t.Fatalf("%d floors remembered, want at most 5: %v", len(floors), floors)
	}
	for i := 1; i < len(floors); i++ {
		if floors[i].Replicas >= floors[i-1].Replicas || floors[i].Time.Before(floors[i-1].Time) {
			t.Errorf("floors %v are not strictly decreasing in time order", floors)
		}
	}
}

func TestNormalizeAndMergeKeepTheForecastFloors(t *testing.T) {
	floors := []Recommendation{{Replicas: 9, Time: now.Add(-time.Minute)}, {Replicas: 7, Time: now}}
	h := History{ForecastFloors: floors}
	for _, b := range []*Behavior{nil, {}} {
		got := Normalize(Input{Current: 5, Desired: 9, Min: 1, Max: 10, Behavior: b, History: h, Now: now,
			DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow}).History.ForecastFloors
		if diff := cmp.Diff(floors, got); diff != "" {
			t.Errorf("Normalize (behavior %v) floors (-want +got):\n%s", b != nil, diff)
		}
	}
	other := History{ForecastFloors: []Recommendation{{Replicas: 8, Time: now.Add(-30 * time.Second)}, {Replicas: 6, Time: now.Add(time.Second)}}}
	want := []Recommendation{{Replicas: 9, Time: now.Add(-time.Minute)}, {Replicas: 8, Time: now.Add(-30 * time.Second)},
		{Replicas: 7, Time: now}, {Replicas: 6, Time: now.Add(time.Second)}}
	if diff := cmp.Diff(want, Merge(h, other, nil).ForecastFloors); diff != "" {
		t.Errorf("Merge floors (-want +got):\n%s", diff)
	}
	if got := Merge(h, History{}, nil).ForecastFloors; !cmp.Equal(floors, got) {
		t.Errorf("Merge with a checkpoint, which keeps no floors, lost the leader's: %v", got)
	}
}
