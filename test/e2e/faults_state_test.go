package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The state faults of issue 20: the harness makes PodAutoscaler status writes
// fail with a validating webhook of its own (framework.StartStatusWebhook),
// and the tests judge podpilot by the target's real replica history.

// replicaChange is one change of a Deployment's spec.replicas, as watched.
type replicaChange struct {
	at       time.Time
	from, to int32
}

func (c replicaChange) String() string {
	return fmt.Sprintf("%d→%d at %s", c.from, c.to, c.at.Format("15:04:05.000"))
}

// replicaHistory records every change of a Deployment's spec.replicas from
// a watch, with the time it was seen.
type replicaHistory struct {
	mu      sync.Mutex
	changes []replicaChange
	last    int32
}

// watchReplicaHistory records the changes of Deployment name in ns until
// the test ends.
func watchReplicaHistory(ctx context.Context, t *testing.T, ns, name string) *replicaHistory {
	t.Helper()
	d, err := cluster.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := &replicaHistory{last: *d.Spec.Replicas}
	w, err := cluster.Client.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: d.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok || ev.Type != watch.Modified || d.Spec.Replicas == nil {
				continue
			}
			h.mu.Lock()
			if r := *d.Spec.Replicas; r != h.last {
				h.changes = append(h.changes, replicaChange{at: time.Now(), from: h.last, to: r})
				h.last = r
			}
			h.mu.Unlock()
		}
	}()
	return h
}

func (h *replicaHistory) list() []replicaChange {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]replicaChange(nil), h.changes...)
}

// observationSlack is how much earlier than the controller's own clock a
// change may be seen by the watch: two changes seen a period apart may have
// been made a little more or less than that apart.
const observationSlack = 500 * time.Millisecond

// checkPodsPolicy checks every change against one Pods policy of each
// direction with the same period (so a change older than it counts for no
// policy): at most up pods added and down pods removed within any period,
// counted from the replicas at the period's start as upstream counts them.
// It returns the largest rise seen within one period.
func checkPodsPolicy(t *testing.T, changes []replicaChange, up, down int32, period time.Duration) int32 {
	t.Helper()
	var worst int32
	for i, c := range changes {
		var ups, downs int32
		for _, b := range changes[:i] {
			if b.at.After(c.at.Add(-period + observationSlack)) {
				if b.to > b.from {
					ups += b.to - b.from
				} else {
					downs += b.from - b.to
				}
			}
		}
		start := c.from - ups + downs
		worst = max(worst, c.to-start)
		if c.to > c.from && c.to > start+up {
			t.Errorf("change %s: more than %d pods within %s (period started at %d); history %v", c, up, period, start, changes)
		}
		if c.to < c.from && c.to < start-down {
			t.Errorf("change %s: more than %d pods removed within %s (period started at %d); history %v", c, down, period, start, changes)
		}
	}
	return worst
}

// stepPolicy is a behavior under which the PodAutoscaler adds and removes
// one pod per 20 s, without stabilization.
const stepPolicy = `  behavior:
    scaleUp: {stabilizationWindowSeconds: 0, policies: [{type: Pods, value: 1, periodSeconds: 20}]}
    scaleDown: {stabilizationWindowSeconds: 0, policies: [{type: Pods, value: 1, periodSeconds: 20}]}
`

// TestFaultStatusDeniedForAWhile (issue 20): a webhook denies every status
// write of the PodAutoscaler for 40 s while the load asks for 8 replicas
// under a policy of one pod per 20 s. The base commit, with status as the
// history's only copy, went 2 → 10 in under 2 s; the target must follow the
// policy throughout, and once writes land again the status holds every scale.
func TestFaultStatusDeniedForAWhile(t *testing.T) {
	ctx := t.Context()
	p := takeOver(ctx, t, 1)[0]
	ns := cluster.CreateNamespace(ctx, t, "fault-status")
	startWorkload(ctx, t, ns, "target", 2)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "target", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(4000) // 2 replicas
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 10, "zdns_vanguard_qps", "2000", stepPolicy))
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionTrue)
	history := watchReplicaHistory(ctx, t, ns, "target")

	const deny = 40 * time.Second
	var until atomic.Int64
	var denied atomic.Int32
	until.Store(time.Now().Add(deny).UnixNano())
	cluster.StartStatusWebhook(ctx, t, ns, 5*time.Second, func(context.Context, *admissionv1.AdmissionRequest) (bool, string) {
		if time.Now().UnixNano() < until.Load() {
			denied.Add(1)
			return false, "e2e: status writes are denied for a while"
		}
		return true, ""
	})
	load.Set(16000) // 8 replicas
	lifted := time.Now().Add(deny)
	select { // the denial itself, not a wait for a condition
	case <-time.After(deny):
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	during := len(history.list())
	framework.WaitFor(ctx, t, time.Minute, "the status to record the last scale-up", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "target")
		if err != nil || pa.Status.ScaleEvents == nil || pa.Status.LastScaleTime == nil {
			return false, "no scale recorded", err
		}
		// Scale events replace those older than the 20 s period (as upstream keeps them); the
		// newest must be the last change seen.
		last := history.list()
		ok := len(last) > 0 && pa.Status.DesiredReplicas == last[len(last)-1].to &&
			!pa.Status.LastScaleTime.Time.Before(last[len(last)-1].at.Add(-2*time.Second))
		return ok, fmt.Sprintf("status desired %d, last scale %s; history %v", pa.Status.DesiredReplicas, pa.Status.LastScaleTime, last), nil
	})
	changes := history.list()
	worst := checkPodsPolicy(t, changes, 1, 1, 20*time.Second)
	if during == 0 || during > int(deny/(20*time.Second))+1 {
		t.Errorf("%d scale-ups while writes were denied for %s, want at least one and no more than the policy allows", during, deny)
	}
	assertNoPanic(t, p)
	reportFault(t, "status-denied", "%d status writes denied over %s (webhook on podautoscalers/status); %d changes while denied, history %v; largest rise within any 20 s period: %d (policy 1; base commit 2 → 10 in under 2 s); status caught up %s after the webhook allowed writes again",
		denied.Load(), deny, during, changes, worst, time.Since(lifted).Round(time.Second))
}

// TestFaultScaleToZeroStatusWriteLost (issue 20): a webhook denies the one
// status write after the scale to zero, and podpilot is restarted before the
// load returns: the new podpilot must find the zero to be podpilot's own (its
// mark is written before the scale) and scale the target back up. On the base
// commit the target stayed at 0 for good (ScalingDisabled).
func TestFaultScaleToZeroStatusWriteLost(t *testing.T) {
	ctx := t.Context()
	leader := takeOver(ctx, t, 1)[0]
	ns := cluster.CreateNamespace(ctx, t, "fault-zero")
	startWorkload(ctx, t, ns, "worker", 1)
	exp := serveExporter(t)
	backlog := map[string]string{"namespace": ns, "queue": "jobs"}
	exp.SetGauge("jobs_backlog", backlog, 25) // 3 replicas
	// The write after the scale to zero is held until the leader is killed, then denied: the
	// next leader finds only what was stored before it.
	var lost atomic.Bool
	held, killed := make(chan string, 1), make(chan struct{})
	cluster.StartStatusWebhook(ctx, t, ns, 10*time.Second, func(ctx context.Context, r *admissionv1.AdmissionRequest) (bool, string) {
		if lost.Load() {
			return true, ""
		}
		replicas, err := cluster.Replicas(ctx, "Deployment", ns, "worker")
		if err != nil || replicas != 0 || !lost.CompareAndSwap(false, true) {
			return true, ""
		}
		held <- string(r.Object.Raw)
		select {
		case <-killed:
		case <-ctx.Done():
		}
		return false, "e2e: the status write after the scale to zero is lost"
	})
	applyPodAutoscaler(ctx, t, ns, []byte(zeroAutoscalerYAML))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 3)
	exp.SetGauge("jobs_backlog", backlog, 0)
	var lostWrite string
	select {
	case lostWrite = <-held:
	case <-time.After(2 * time.Minute):
		t.Fatal("no status write after the scale to zero")
	}
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	close(killed)
	pa, err := getPodAutoscaler(ctx, t, ns, "zero")
	if err != nil {
		t.Fatal(err)
	}
	stored := fmt.Sprintf("desiredReplicas %d, ScaledToZero %v", pa.Status.DesiredReplicas,
		meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero))
	if !meta.IsStatusConditionTrue(pa.Status.Conditions, podpilotv1alpha1.ConditionScaledToZero) {
		t.Errorf("stored status without the ScaledToZero mark after the lost write: %s", describeConditions(pa))
	}
	p := cluster.StartPodpilot(t, podpilotBinary, sharedArgs()...)
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := cluster.RegisterMetricsAPIs(ctx, p.Port); err != nil {
		t.Fatal(err)
	}
	exp.SetGauge("jobs_backlog", backlog, 35) // ceil(35/10) = 4
	returned := time.Now()
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "worker", 4)
	assertNoPanic(t, p)
	reportFault(t, "scale-to-zero-write-lost", "the status write after the scale to zero was held, podpilot SIGKILLed, then the write denied (it carried ScaledToZero %s); stored status then: %s (the mark was written before the scale); podpilot started again and started again; the target came back 0 → 4 %s after the load returned (base commit: stranded at 0, ScalingDisabled)",
		scaledToZeroIn(lostWrite), stored, time.Since(returned).Round(100*time.Millisecond))
}

// zeroAutoscalerYAML is a PodAutoscaler named zero scaling Deployment worker
// between 0 and 6 on the external metric jobs_backlog (Value 10), without a
// scale-down window.
const zeroAutoscalerYAML = `apiVersion: autoscaling.podpilot.io/v1alpha1
kind: PodAutoscaler
metadata: {name: zero}
spec:
  scaleTargetKind: deployment
  scaleTargetName: worker
  minReplicas: 0
  maxReplicas: 6
  externalMetrics:
  - metricName: jobs_backlog
    targetType: Value
    value: "10"
  behavior:
    scaleDown: {stabilizationWindowSeconds: 0}
`

// scaledToZeroIn returns the ScaledToZero condition of a PodAutoscaler's JSON.
func scaledToZeroIn(raw string) string {
	var pa podpilotv1alpha1.PodAutoscaler
	if err := json.Unmarshal([]byte(raw), &pa); err != nil {
		return "unreadable"
	}
	for _, c := range pa.Status.Conditions {
		if c.Type == podpilotv1alpha1.ConditionScaledToZero {
			return strings.TrimSpace(string(c.Status) + " " + c.Reason)
		}
	}
	return "<none>"
}
