package controller

import (
	"fmt"
	"testing"
	"time"
)

// A new leader and the recommendations its predecessor never checkpointed (issue 27, medium 6):
// measured on the base commit, a status write lost after 2 → 4, then a new leader: 4 → 2 fifteen
// seconds later under a 300 s scale-down window.

func TestANewLeaderHoldsTheScaleDownWindowFromWhatTheTargetShows(t *testing.T) {
	qps := "2000" // 2 pods at 2000 against 2000: 2 replicas
	f := newFixture(t, settableQPS(&qps, podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	if err := f.sync(); err != nil { // a checkpoint of 2, recommending 2
		t.Fatal(err)
	}
	f.clock.Step(15 * time.Second)
	qps = "4000"
	denyStatus(f, func() bool { return f.replicas("") == 4 && qps == "4000" }) // the write after 2 → 4 is lost
	if err := f.sync(); f.replicas("") != 4 {
		t.Fatalf("round 2: %v, %d replicas; want 4", err, f.replicas(""))
	}
	f.restart() // a new leader, whose checkpoint says 2
	qps = "1000"
	start := f.clock.Now().Add(15 * time.Second)
	var rounds []int32
	for range 22 { // 15 s apart, 0 to 315 s after the new leader's first round
		f.clock.Step(15 * time.Second)
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		rounds = append(rounds, f.replicas(""))
		if r := f.replicas(""); r < 4 && f.clock.Since(start) < 300*time.Second {
			t.Fatalf("scaled down to %d %s after the new leader's first round (rounds %v), want none within the 300 s window", r, f.clock.Since(start), rounds)
		}
	}
	fmt.Printf("FIGURE new-leader-window: %v at 15 s steps from the new leader's first round (window 300 s; base commit: 4 → 2 at its first round)\n", rounds)
	if got := f.replicas(""); got != 1 {
		t.Errorf("replicas = %d, want 1 once the window has passed", got)
	}
}
