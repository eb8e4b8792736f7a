package state

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
)

func TestMemoryIsSeededFromStatusOncePerObjectAndForgottenWithIt(t *testing.T) {
	m := New[struct{}]()
	pa := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.UID = "uid-1"
		pa.Status.ObservedGeneration, pa.Status.DesiredReplicas = 1, 3
		pa.Status.Recommendations = []podpilotv1alpha1.Recommendation{{Replicas: 3, Timestamp: metav1.NewTime(now.Add(-time.Minute))}}
		pa.Status.Conditions = []metav1.Condition{{Type: podpilotv1alpha1.ConditionScaledToZero, Status: metav1.ConditionTrue}}
	})
	got := m.Recall(pa, now)
	if len(got.History.Recommendations) != 1 || !got.ZeroKnown || !got.Zero || got.CheckpointDesired != 3 || got.Checked {
		t.Fatalf("seeded %+v, want the status's history, zero mark and desired replicas", got)
	}
	m.Remember(ObjectRef(pa), func(e *Remembered[struct{}]) { e.History.Recommendations = nil })
	if again := m.Recall(pa, now); len(again.History.Recommendations) != 0 {
		t.Errorf("a second recall seeded again from status: %+v", again.History)
	}

	replaced := pa.DeepCopy()
	replaced.UID = "uid-2"
	if fresh := m.Recall(replaced, now); len(fresh.History.Recommendations) != 1 {
		t.Errorf("an object created again under the name got the old object's memory: %+v", fresh.History)
	}
	if _, ok := m.entries[identity{uid: types.UID("uid-1"), key: paKey}]; ok {
		t.Error("the replaced object's entry was kept")
	}

	ForgetObject[struct{}](m, cache.DeletedFinalStateUnknown{Key: paKey.String(), Obj: replaced})
	if len(m.entries) != 0 || len(m.uids) != 0 {
		t.Errorf("after the delete: %d entries, %d names; want none", len(m.entries), len(m.uids))
	}
	m.Recall(pa, now)
	m.Forget(NameRef(paKey))
	if len(m.entries) != 0 {
		t.Errorf("forget by name left %d entries", len(m.entries))
	}
}

func TestAHoldKeepsTheOtherDirectionBackForTheLongestPeriod(t *testing.T) {
	b := &normalize.Behavior{} // upstream's default policies: 15 s periods
	up := Hold{}.After(b, 4, 5, now)
	down := Hold{}.After(b, 5, 4, now)
	cases := []struct {
		name             string
		h                Hold
		current, desired int32
		at               time.Duration
		want             bool
	}{
		{"a scale-up of unknown outcome holds a scale-down", up, 5, 4, 10 * time.Second, true},
		{"a scale-up of unknown outcome never holds a scale-up", up, 5, 6, 10 * time.Second, false},
		{"a scale-down of unknown outcome holds a scale-up", down, 4, 5, 10 * time.Second, true},
		{"the hold ends with the longest period", up, 5, 4, 15 * time.Second, false},
		{"no behavior, no events: nothing held", Hold{}.After(nil, 4, 5, now), 5, 4, time.Second, false},
	}
	for _, c := range cases {
		if got := c.h.Holds(c.current, c.desired, now.Add(c.at)); got != c.want {
			t.Errorf("%s: holds = %v", c.name, got)
		}
	}
}

func TestForgetMatchingDropsOnlyTheMatchedNames(t *testing.T) {
	m := New[struct{}]()
	kept := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Name, pa.UID = "kept", "uid-kept" })
	lost := seedAutoscaler(func(pa *podpilotv1alpha1.PodAutoscaler) { pa.Name, pa.UID = "lost", "uid-lost" })
	m.Recall(kept, now)
	m.Recall(lost, now)
	if n := m.ForgetMatching(func(k cache.ObjectName) bool { return k.Name == "lost" }); n != 1 {
		t.Errorf("forgot %d, want 1", n)
	}
	if m.Len() != 1 || !Known[struct{}](m, kept) || Known[struct{}](m, lost) {
		t.Errorf("after forgetting the lost bucket: %d entries, kept known %v, lost known %v", m.Len(), Known[struct{}](m, kept), Known[struct{}](m, lost))
	}
	if _, ok := m.uids[cache.ObjectName{Namespace: lost.Namespace, Name: "lost"}]; ok {
		t.Error("the lost name was kept")
	}
}
