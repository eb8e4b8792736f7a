package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	clocktesting "k8s.io/utils/clock/testing"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

func TestMemoryIsSeededFromStatusOncePerObjectAndForgottenWithIt(t *testing.T) {
	m := newMemory()
	pa := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.UID = "uid-1"
		pa.Status.ObservedGeneration, pa.Status.DesiredReplicas = 1, 3
		pa.Status.Recommendations = []podpilotv1alpha1.Recommendation{{Replicas: 3, Timestamp: metav1.NewTime(now.Add(-time.Minute))}}
		pa.Status.Conditions = []metav1.Condition{{Type: podpilotv1alpha1.ConditionScaledToZero, Status: metav1.ConditionTrue}}
	})
	got := m.recall(pa, now)
	if len(got.history.Recommendations) != 1 || !got.zeroKnown || !got.zero || got.checkpointDesired != 3 || got.checked {
		t.Fatalf("seeded %+v, want the status's history, zero mark and desired replicas", got)
	}
	m.update(pa, func(e *remembered) { e.history.Recommendations = nil })
	if again := m.recall(pa, now); len(again.history.Recommendations) != 0 {
		t.Errorf("a second recall seeded again from status: %+v", again.history)
	}

	replaced := pa.DeepCopy()
	replaced.UID = "uid-2"
	if fresh := m.recall(replaced, now); len(fresh.history.Recommendations) != 1 {
		t.Errorf("an object created again under the name got the old object's memory: %+v", fresh.history)
	}
	if _, ok := m.entries[identity{uid: types.UID("uid-1"), key: paKey}]; ok {
		t.Error("the replaced object's entry was kept")
	}

	m.forgetObject(cache.DeletedFinalStateUnknown{Key: paKey.String(), Obj: replaced})
	if len(m.entries) != 0 || len(m.uids) != 0 {
		t.Errorf("after the delete: %d entries, %d names; want none", len(m.entries), len(m.uids))
	}
	m.recall(pa, now)
	m.forget(paKey)
	if len(m.entries) != 0 {
		t.Errorf("forget by name left %d entries", len(m.entries))
	}
}

func TestADeletedPodAutoscalerIsForgottenAtItsNextRound(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.ctrl.term.Load().memory.entries); n != 1 {
		t.Fatalf("entries after a round = %d, want 1", n)
	}
	if err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).Delete(t.Context(), paKey.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := len(f.ctrl.term.Load().memory.entries); n != 0 {
		t.Errorf("entries after the PodAutoscaler was deleted = %d, want 0", n)
	}
}

func TestAHoldKeepsTheOtherDirectionBackForTheLongestPeriod(t *testing.T) {
	b := &normalize.Behavior{} // upstream's default policies: 15 s periods
	up := hold{}.after(b, 4, 5, now)
	down := hold{}.after(b, 5, 4, now)
	cases := []struct {
		name             string
		h                hold
		current, desired int32
		at               time.Duration
		want             bool
	}{
		{"a scale-up of unknown outcome holds a scale-down", up, 5, 4, 10 * time.Second, true},
		{"a scale-up of unknown outcome never holds a scale-up", up, 5, 6, 10 * time.Second, false},
		{"a scale-down of unknown outcome holds a scale-up", down, 4, 5, 10 * time.Second, true},
		{"the hold ends with the longest period", up, 5, 4, 15 * time.Second, false},
		{"no behavior, no events: nothing held", hold{}.after(nil, 4, 5, now), 5, 4, time.Second, false},
	}
	for _, c := range cases {
		if got := c.h.holds(c.current, c.desired, now.Add(c.at)); got != c.want {
			t.Errorf("%s: holds = %v", c.name, got)
		}
	}
}

func TestAHeldDirectionNeverKeepsATargetOutsideMinAndMax(t *testing.T) {
	tm := newTerm(clocktesting.NewFakeClock(now), *NewOptions())
	defer tm.shutDown()
	pa := seedAutoscaler() // 1 to 5
	tm.memory.recall(pa, now)
	tm.memory.update(pa, func(e *remembered) { e.hold = hold{down: now.Add(time.Minute)} })
	above := holdBack(tm, pa, decision.Decision{Rescale: true, DesiredReplicas: 5}, 7, now)
	within := holdBack(tm, pa, decision.Decision{Rescale: true, DesiredReplicas: 3}, 4, now)
	if !above.Rescale || within.Rescale {
		t.Errorf("rescale 7 → 5 (above max) %v, 4 → 3 %v; want the first made, the second held", above.Rescale, within.Rescale)
	}
}
