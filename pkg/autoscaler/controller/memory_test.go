package controller

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/state"
)

func TestADeletedPodAutoscalerIsForgottenAtItsNextRound(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler(checkpointed(2)))...)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := f.ctrl.term.Load().memory.Len(); n != 1 {
		t.Fatalf("entries after a round = %d, want 1", n)
	}
	if err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).Delete(t.Context(), paKey.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if n := f.ctrl.term.Load().memory.Len(); n != 0 {
		t.Errorf("entries after the PodAutoscaler was deleted = %d, want 0", n)
	}
}

func TestAHeldDirectionNeverKeepsATargetOutsideMinAndMax(t *testing.T) {
	tm := newTerm(clocktesting.NewFakeClock(now), *NewOptions())
	defer tm.shutDown()
	pa := seedAutoscaler() // 1 to 5
	tm.memory.Recall(pa, now)
	tm.memory.Remember(state.ObjectRef(pa), func(e *remembered) { e.Hold = state.Hold{Down: now.Add(time.Minute)} })
	above := holdBack(tm, pa, decision.Decision{Rescale: true, DesiredReplicas: 5}, 7, now)
	within := holdBack(tm, pa, decision.Decision{Rescale: true, DesiredReplicas: 3}, 4, now)
	if !above.Rescale || within.Rescale {
		t.Errorf("rescale 7 → 5 (above max) %v, 4 → 3 %v; want the first made, the second held", above.Rescale, within.Rescale)
	}
}
