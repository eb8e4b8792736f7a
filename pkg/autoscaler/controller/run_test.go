package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

func TestRunScalesAnAutoscalerSeenByItsInformer(t *testing.T) {
	f := newFixture(t, qpsPerPod("3000", podNames(2)...), nil, append(seedPods(2), seedDeployment(2), seedAutoscaler())...)
	ctx, cancel := context.WithCancel(t.Context())
	f.kubeInf.Start(ctx.Done())
	f.ppInf.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- f.ctrl.Run(ctx) }()

	err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return f.replicas("") == 3, nil
	})
	if err != nil {
		t.Errorf("deployment not scaled to 3: %v", err)
	}
	if err := f.ctrl.Run(ctx); !errors.Is(err, ErrAlreadyRunning) {
		t.Errorf("second Run = %v, want ErrAlreadyRunning", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil after the context ends", err)
	}
	f.kubeInf.Shutdown()
	f.ppInf.Shutdown()
}

func TestRunFailsWhenCachesDoNotSync(t *testing.T) {
	f := newFixture(t, nil, nil, seedAutoscaler())
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	// The factories are never started, so the caches never sync.
	if err := f.ctrl.Run(ctx); !errors.Is(err, ErrCacheSync) {
		t.Errorf("Run = %v, want ErrCacheSync", err)
	}
}

func TestLivenessFailsOnlyWhenTheLoopMakesNoProgressForThreeRoundDeadlines(t *testing.T) {
	f := newFixture(t, nil, nil)
	check := f.ctrl.Healthz()
	if err := check.Check(nil); err != nil {
		t.Errorf("not running: %v, want healthy (no leadership is not a failure)", err)
	}
	f.ctrl.running.Store(true)
	f.ctrl.tick()
	// A round has one sync period to finish (its deadline), so a slow source delays a tick by at
	// most that: the check allows three.
	f.clock.Step(3 * DefaultSyncPeriod)
	if err := check.Check(nil); err != nil {
		t.Errorf("ticked three round deadlines ago: %v, want healthy", err)
	}
	f.clock.Step(time.Second)
	if err := check.Check(nil); err == nil {
		t.Error("no progress for more than three round deadlines: healthy, want a failure")
	}
}
