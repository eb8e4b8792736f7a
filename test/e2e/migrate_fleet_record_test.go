package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// What the fleet test records from its watches. Every object lives in the one etcd of the local
// control plane, so resourceVersions (etcd revisions) order the events of Deployments, HPAs and
// PodAutoscalers against each other; at is when the watch delivered the event.

// fleetReplicaChange is a change of a Deployment's spec.replicas, and the field manager owning
// spec.replicas after it (who wrote it).
type fleetReplicaChange struct {
	rv        uint64
	at        time.Time
	old, new  int32
	owner     string
	ownerTime string
}

// decisionObs is one state of an autoscaler: its inputs (current replicas, metric values) and
// its decision. For a PodAutoscaler, dryRun is its spec's and decided says its status is for
// its current spec with a decision.
type decisionObs struct {
	rv       uint64
	at       time.Time
	current  int32
	desired  int32
	metrics  []float64
	dryRun   bool
	mode     podpilotv1alpha1.PodAutoscalerMode
	decided  bool
	deletion bool
	// timeLimited says a stabilization window or a scaling limit held the decision (the HPA's
	// AbleToScale or ScalingLimited reason, the PodAutoscaler's lastDecision.changes): rules
	// whose result depends on when the round runs. proposal is the PodAutoscaler's unlimited
	// recommendation, its largest metric proposal within its bounds (-1 for an HPA: not shown).
	timeLimited bool
	proposal    int32
}

// timeReasons are the reasons of a decision held by a window or a limit.
var timeReasons = []string{"ScaleUpStabilized", "ScaleDownStabilized", "ScaleUpLimit", "ScaleDownLimit"}

func timeReason(reason string) bool {
	for _, r := range timeReasons {
		if strings.Contains(reason, r) {
			return true
		}
	}
	return false
}

// fleetRecord is the record of every target, by namespace/name.
type fleetRecord struct {
	initial  map[string]int32
	changes  map[string][]fleetReplicaChange
	hpas     map[string][]decisionObs
	pas      map[string][]decisionObs
	killedAt time.Time
	// killedActivated, rerunActivated and rerunFinished count, in the first namespace, the
	// hand-overs the killed run reported done, those the rerun did, and the hand-overs the kill
	// left between the HPA's deletion and dryRun off that the rerun finished.
	killedActivated, rerunActivated, rerunFinished int
}

type fleetRecorder struct {
	mu     sync.Mutex
	rec    fleetRecord
	last   map[string]int32
	ns     map[string]bool
	cancel context.CancelFunc
	wg     sync.WaitGroup
	t      *testing.T
}

// startFleetRecorder lists the Deployments, HPAs and PodAutoscalers of namespaces and watches
// them from there until stop.
func startFleetRecorder(ctx context.Context, t *testing.T, namespaces []string) *fleetRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	r := &fleetRecorder{t: t, cancel: cancel, last: map[string]int32{}, ns: map[string]bool{},
		rec: fleetRecord{initial: map[string]int32{}, changes: map[string][]fleetReplicaChange{},
			hpas: map[string][]decisionObs{}, pas: map[string][]decisionObs{}}}
	for _, ns := range namespaces {
		r.ns[ns] = true
	}
	deps, err := cluster.Client.AppsV1().Deployments("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range deps.Items {
		r.onDeployment(watch.Added, &deps.Items[i])
	}
	hpas, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc := podpilotClient(t)
	pas, err := pc.AutoscalingV1alpha1().PodAutoscalers("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.watch(ctx, deps.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return cluster.Client.AppsV1().Deployments("").Watch(ctx, o)
	})
	r.watch(ctx, hpas.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return cluster.Client.AutoscalingV2().HorizontalPodAutoscalers("").Watch(ctx, o)
	})
	r.watch(ctx, pas.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return pc.AutoscalingV1alpha1().PodAutoscalers("").Watch(ctx, o)
	})
	t.Cleanup(func() { r.cancel(); r.wg.Wait() })
	return r
}

func (r *fleetRecorder) watch(ctx context.Context, rv string, w cache.WatchFuncWithContext) {
	rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: w})
	if err != nil {
		r.t.Fatal(err)
	}
	r.wg.Go(func() {
		defer rw.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-rw.ResultChan():
				if !ok {
					return
				}
				r.on(ev)
			}
		}
	})
}

func (r *fleetRecorder) on(ev watch.Event) {
	if ev.Type == watch.Bookmark {
		return
	}
	switch o := ev.Object.(type) {
	case *appsv1.Deployment:
		r.onDeployment(ev.Type, o)
	case *autoscalingv2.HorizontalPodAutoscaler:
		r.onHPA(ev.Type, o)
	case *podpilotv1alpha1.PodAutoscaler:
		r.onPA(ev.Type, o)
	case *metav1.Status:
		r.t.Errorf("watch error: %s", o.Message)
	}
}

func parseRV(o metav1.Object) uint64 {
	rv, _ := strconv.ParseUint(o.GetResourceVersion(), 10, 64)
	return rv
}

func (r *fleetRecorder) onDeployment(typ watch.EventType, d *appsv1.Deployment) {
	if !r.ns[d.Namespace] || d.Spec.Replicas == nil || typ == watch.Deleted {
		return
	}
	key, n := d.Namespace+"/"+d.Name, *d.Spec.Replicas
	r.mu.Lock()
	defer r.mu.Unlock()
	old, seen := r.last[key]
	r.last[key] = n
	switch {
	case !seen:
		r.rec.initial[key] = n
	case old != n:
		owner, when := replicasOwner(d)
		r.rec.changes[key] = append(r.rec.changes[key], fleetReplicaChange{rv: parseRV(d), at: time.Now(), old: old, new: n, owner: owner, ownerTime: when})
	}
}

// replicasOwner is the field manager that owns spec.replicas (the last to change it), and when.
func replicasOwner(d *appsv1.Deployment) (string, string) {
	for _, f := range d.ManagedFields {
		if f.Subresource == "status" || f.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]json.RawMessage
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		if _, ok := fields["f:spec"]["f:replicas"]; ok {
			when := ""
			if f.Time != nil {
				when = f.Time.UTC().Format(time.RFC3339)
			}
			return f.Manager, when
		}
	}
	return "", ""
}

func (r *fleetRecorder) onHPA(typ watch.EventType, h *autoscalingv2.HorizontalPodAutoscaler) {
	if !r.ns[h.Namespace] {
		return
	}
	var metrics []float64
	for _, m := range h.Status.CurrentMetrics {
		metrics = append(metrics, hpaMetricValue(m))
	}
	obs := decisionObs{rv: parseRV(h), at: time.Now(), current: h.Status.CurrentReplicas, desired: h.Status.DesiredReplicas,
		metrics: metrics, decided: h.Status.LastScaleTime != nil || len(metrics) > 0, deletion: typ == watch.Deleted, proposal: -1}
	for _, c := range h.Status.Conditions {
		if (c.Type == autoscalingv2.AbleToScale || c.Type == autoscalingv2.ScalingLimited) && c.Status == corev1.ConditionTrue && timeReason(c.Reason) {
			obs.timeLimited = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := h.Namespace + "/" + h.Name
	r.rec.hpas[key] = append(r.rec.hpas[key], obs)
}

func (r *fleetRecorder) onPA(typ watch.EventType, pa *podpilotv1alpha1.PodAutoscaler) {
	if !r.ns[pa.Namespace] || typ == watch.Deleted {
		return
	}
	var metrics []float64
	for _, m := range pa.Status.CurrentMetrics {
		metrics = append(metrics, metricNumber(m.AverageUtilization, m.AverageValue, m.Value))
	}
	obs := decisionObs{rv: parseRV(pa), at: time.Now(), current: pa.Status.CurrentReplicas, desired: pa.Status.DesiredReplicas,
		metrics: metrics, dryRun: pa.Spec.DryRun, mode: pa.Status.Mode,
		decided: pa.Status.ObservedGeneration == pa.Generation && pa.Status.LastDecision != nil, proposal: -1}
	if ld := pa.Status.LastDecision; ld != nil {
		for _, ch := range ld.Changes {
			obs.timeLimited = obs.timeLimited || timeReason(ch)
		}
		for _, p := range ld.Proposals {
			obs.proposal = max(obs.proposal, min(max(p.Replicas, ptr.Deref(pa.Spec.MinReplicas, 1)), pa.Spec.MaxReplicas))
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := pa.Namespace + "/" + pa.Name
	r.rec.pas[key] = append(r.rec.pas[key], obs)
}

// hpaMetricValue is the current value of an HPA metric status: its utilization if it has one,
// else its average value, else its value.
func hpaMetricValue(m autoscalingv2.MetricStatus) float64 {
	var c *autoscalingv2.MetricValueStatus
	switch {
	case m.Pods != nil:
		c = &m.Pods.Current
	case m.Object != nil:
		c = &m.Object.Current
	case m.External != nil:
		c = &m.External.Current
	case m.Resource != nil:
		c = &m.Resource.Current
	case m.ContainerResource != nil:
		c = &m.ContainerResource.Current
	default:
		return -1
	}
	return metricNumber(c.AverageUtilization, c.AverageValue, c.Value)
}

func metricNumber(util *int32, avg, val *resource.Quantity) float64 {
	switch {
	case util != nil:
		return float64(*util)
	case avg != nil:
		return avg.AsApproximateFloat64()
	case val != nil:
		return val.AsApproximateFloat64()
	}
	return -1
}

// stop ends the watches and returns the record.
func (r *fleetRecorder) stop() fleetRecord {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

// runMigrate runs bin/podpilot migrate with args, logging its output, and returns its stdout.
// With killAfter > 0 it SIGKILLs the run once it printed its killAfter-th HPA deletion (an
// interruption) and returns when it was killed; otherwise the run must exit 0.
func runMigrate(ctx context.Context, t *testing.T, args []string, killAfter int) (string, time.Time) {
	t.Helper()
	cmd := exec.CommandContext(ctx, podpilotBinary, append([]string{"migrate"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	var killedAt time.Time
	deleted := 0
	s := bufio.NewScanner(stdout)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		out.WriteString(line + "\n")
		if killAfter > 0 && strings.HasSuffix(line, ": HorizontalPodAutoscaler deleted") {
			if deleted++; deleted == killAfter && killedAt.IsZero() {
				_ = cmd.Process.Kill()
				killedAt = time.Now()
			}
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	err = cmd.Wait()
	if strings.Contains(strings.Join(args, " "), "--apply") || t.Failed() {
		t.Logf("podpilot migrate %s (%s): %v\nstdout:\n%sstderr:\n%s", strings.Join(args, " "), time.Since(start).Round(time.Millisecond), err, out.String(), stderr.String())
	}
	switch {
	case killAfter > 0 && killedAt.IsZero():
		t.Fatalf("podpilot migrate %s deleted %d HPAs, never a %dth to be interrupted after", strings.Join(args, " "), deleted, killAfter)
	case killAfter == 0 && err != nil:
		t.Fatalf("podpilot migrate %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out.String(), killedAt
}

// describeObs is one observation for a failure message.
func describeObs(o decisionObs) string {
	return fmt.Sprintf("rv %d at %s: %d→%d, metrics %v, dryRun %t, mode %q, decided %t, time-limited %t, proposal %d, deletion %t",
		o.rv, o.at.Format("15:04:05.000"), o.current, o.desired, o.metrics, o.dryRun, o.mode, o.decided, o.timeLimited, o.proposal, o.deletion)
}
