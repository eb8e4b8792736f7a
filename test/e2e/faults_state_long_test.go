//go:build faults

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestFaultLeaderKilledBetweenScaleAndStatus (issue 20): two podpilots with
// leader election; the load asks for 8 replicas under a policy of one pod per
// 30 s. The webhook holds the leader's first status write that records a
// scale, the leader is SIGKILLed while it is held, and the write is then
// denied: the scale landed, its record did not. The follower takes the Lease
// and must not add the next pod before the policy's period has passed since
// the one the dead leader added, judged from the target's replica history.
func TestFaultLeaderKilledBetweenScaleAndStatus(t *testing.T) {
	ctx := t.Context()
	const lease, retry, period = 8 * time.Second, time.Second, 30 * time.Second
	ps := twoLeaders(ctx, t, lease, retry)
	ns := cluster.CreateNamespace(ctx, t, "fault-leader-state")
	lead, follower := leader(ctx, t, ps, ns, "target")
	startWorkload(ctx, t, ns, "target", 2)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "target", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(4000) // 2 replicas
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 10, "zdns_vanguard_qps", "2000", fmt.Sprintf(`  behavior:
    scaleUp: {stabilizationWindowSeconds: 0, policies: [{type: Pods, value: 1, periodSeconds: %d}]}
    scaleDown: {stabilizationWindowSeconds: 600}
`, int(period.Seconds()))))
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionTrue)
	history := watchReplicaHistory(ctx, t, ns, "target")

	var armed atomic.Bool
	armed.Store(true)
	held, killed := make(chan struct{}, 1), make(chan struct{})
	cluster.StartStatusWebhook(ctx, t, ns, 15*time.Second, func(ctx context.Context, r *admissionv1.AdmissionRequest) (bool, string) {
		if !armed.Load() || !recordsAScale(r) || !armed.CompareAndSwap(true, false) {
			return true, ""
		}
		held <- struct{}{}
		select {
		case <-killed:
		case <-ctx.Done():
		}
		return false, "e2e: the status write of a dead leader"
	})
	oldHolder, err := leaseHolder(ctx, ns, "target")
	if err != nil {
		t.Fatal(err)
	}
	load.Set(16000) // 8 replicas, one pod per 30 s
	select {
	case <-held:
	case <-time.After(2 * time.Minute):
		t.Fatal("no status write recording a scale")
	}
	if err := lead.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	close(killed)
	var newHolder string
	framework.WaitFor(ctx, t, 2*lease+10*time.Second, "the follower to take the Lease", func(ctx context.Context) (bool, string, error) {
		h, err := leaseHolder(ctx, ns, "target")
		newHolder = h
		return err == nil && h != "" && h != oldHolder, "holder " + h, err
	})
	takeover := time.Since(killedAt)
	checkTookOver(ctx, t, follower, newHolder)
	cluster.WaitReplicas(ctx, t, 3*time.Minute, "Deployment", ns, "target", 5)
	changes := history.list()
	worst := checkPodsPolicy(t, changes, 1, 1, period)
	var gap time.Duration
	if len(changes) >= 2 {
		gap = changes[1].at.Sub(changes[0].at)
	}
	assertNoPanic(t, follower)
	reportFault(t, "leader-killed-between-scale-and-status", "the leader was SIGKILLed while its status write recording %v was held (then denied); the follower took the Lease %s later and added the next pod %s after the dead leader's (policy 1 pod per %s); history %v; largest rise within any period: %d",
		changes[0], takeover.Round(100*time.Millisecond), gap.Round(100*time.Millisecond), period, changes, worst)
}

// recordsAScale reports whether a status write records a new scale: its lastScaleTime changed.
func recordsAScale(r *admissionv1.AdmissionRequest) bool {
	var now, before podpilotv1alpha1.PodAutoscaler
	if json.Unmarshal(r.Object.Raw, &now) != nil || json.Unmarshal(r.OldObject.Raw, &before) != nil || now.Status.LastScaleTime == nil {
		return false
	}
	return before.Status.LastScaleTime == nil || !now.Status.LastScaleTime.Equal(before.Status.LastScaleTime)
}

// twoLeaders takes over with two podpilots electing a leader with the given
// lease duration and retry period (renew deadline 5 s). Which one leads for a
// PodAutoscaler is leader's answer.
func twoLeaders(ctx context.Context, t *testing.T, lease, retry time.Duration) []*framework.Podpilot {
	t.Helper()
	return takeOver(ctx, t, 2, "--leader-elect-lease-duration="+lease.String(), "--leader-elect-renew-deadline=5s", "--leader-elect-retry-period="+retry.String())
}
