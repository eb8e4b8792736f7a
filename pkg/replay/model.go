package replay

import (
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// errNoData means Prometheus had no sample of a metric at a step; the step's decision sees the
// metric as failed, as the controller would.
var errNoData = errors.New("no samples in the history at this step")

// Trace is a workload's history at the replay's steps. NaN marks a step without data.
type Trace struct {
	// Times are the steps, oldest first.
	Times []time.Time
	// Actual is the workload's real replica count at each step.
	Actual []float64
	// Loads holds, per metric of the spec (same order), the load at each step: for Pods, Resource
	// and ContainerResource metrics the per-pod samples summed over the pods that had one; for
	// Object and External metrics with an AverageValue target the value (an External metric's
	// series summed), and with a Value target the value times the actual replicas (see valueLoads).
	Loads [][]float64
}

// Model holds the settings of the load model and of the algorithm.
type Model struct {
	// Config is the algorithm's flag-configured settings (tolerance, downscale stabilization).
	Config decision.Config
	// SyncPeriod is the modelled --autoscaler-sync-period: with ReadyDelay, the lead time a
	// forecast observes when spec.prediction names none.
	SyncPeriod time.Duration
	// ReadyDelay is how long a replayed pod takes from creation to ready.
	ReadyDelay time.Duration
	// Requests are the replayed pods' resource requests, for Utilization targets.
	Requests Requests
}

// Requests are the resource requests of every replayed pod, in milli-units, that Utilization
// targets are read against.
type Requests struct {
	// Pod are the pod's requests (the sum over its containers), for Resource metrics.
	Pod map[corev1.ResourceName]int64
	// Containers are, by container name, each container's own requests, for ContainerResource
	// metrics.
	Containers map[string]map[corev1.ResourceName]int64
}

// of is the request a Utilization target t is read against: its container's for a
// ContainerResource target, else the pod's; false when unknown (or r is nil).
func (r *Requests) of(t replicas.Target) (int64, bool) {
	if r == nil {
		return 0, false
	}
	reqs := r.Pod
	if t.Container != "" {
		reqs = r.Containers[t.Container]
	}
	v, ok := reqs[t.Resource]
	return v, ok
}

// Step is the replay's state at one step.
type Step struct {
	// Time is the step's time.
	Time time.Time
	// Actual is the real replica count, NaN when unknown.
	Actual float64
	// Ready is the number of replayed pods that were ready, carrying the load, at the step.
	Ready int32
	// Replicas is the replayed replica count after the step's decision.
	Replicas int32
	// Load is each metric's load (NaN without data); PerPod is it spread over the ready pods.
	Load, PerPod []float64
	// Reason explains a rescale at this step, empty when the step kept the replicas.
	Reason string
}

// replayPod is one pod of the replayed workload.
type replayPod struct {
	name    string
	created time.Time
}

// Simulate replays spec over tr: at every step the load of each metric spreads evenly over the
// replayed pods that are ready, and the real decision is made with the step's time as the clock.
// A pod created at a step becomes ready ReadyDelay later; a scale-down removes the newest pods.
// The replay starts from the first known actual replica count (minReplicas when none is known),
// with all those pods ready long since.
func Simulate(spec Spec, tr Trace, m Model) []Step {
	return simulate(spec, tr, m, nil)
}

// simulate is Simulate with a forecaster whose loads enter each step's decision (nil: none).
func simulate(spec Spec, tr Trace, m Model, fc forecaster) []Step {
	if len(tr.Times) == 0 {
		return nil
	}
	// The pods at the start have been running long: an hour before, past any initialization period.
	pods := newPods(nil, initialReplicas(spec, tr), tr.Times[0].Add(-m.ReadyDelay-time.Hour), 0)
	var history normalize.History
	var zero bool // the ScaledToZero mark, as the controller keeps it
	failing := make([]time.Time, len(spec.Metrics))
	steps := make([]Step, 0, len(tr.Times))
	for i, now := range tr.Times {
		in, ready := decisionInput(spec, tr, m, pods, i)
		in.History, in.ScaledToZero = history, zero
		in.Floor = spec.floor(now)
		for k := range in.Metrics {
			in.Metrics[k].FailingSince = failing[k]
		}
		if fc != nil {
			in.Forecast = fc.forecast(i)
		}
		d := decision.Decide(in)
		for k, dm := range in.Metrics {
			failing[k] = decision.FailingSince(dm, now)
		}
		current := int32(len(pods))
		step := Step{Time: now, Actual: tr.Actual[i], Ready: ready, Replicas: current}
		history = d.History
		if d.Rescale {
			zero = d.HoldsAtZero
			history = normalize.RecordScaleEvent(d.History, spec.Behavior, current, d.DesiredReplicas, now)
			pods = resize(pods, d.DesiredReplicas, now, i)
			step.Replicas, step.Reason = d.DesiredReplicas, d.Reason
		}
		for k := range spec.Metrics {
			load := tr.Loads[k][i]
			step.Load = append(step.Load, load)
			step.PerPod = append(step.PerPod, load/float64(max(ready, 1)))
		}
		steps = append(steps, step)
	}
	return steps
}

// initialReplicas is the first known actual replica count within spec's bounds, else minReplicas.
func initialReplicas(spec Spec, tr Trace) int32 {
	lo, hi := spec.PodAutoscaler.Spec.MinReplicasOrDefault(), spec.PodAutoscaler.Spec.MaxReplicas
	for _, a := range tr.Actual {
		if !math.IsNaN(a) {
			return min(max(int32(math.Round(a)), lo), hi)
		}
	}
	return lo
}

// decisionInput builds step i's input: the replayed pods with their readiness and, per metric,
// the load shared evenly by the ready pods, or the value of an Object or External metric (see
// wholeValue). Pods not yet ready have no sample, as a pod that receives no traffic yet; the
// algorithm treats them as it does real ones. A step without data fails the metric, as a failed
// read does in the controller: the decision holds, or an External metric's fallback applies.
func decisionInput(spec Spec, tr Trace, m Model, pods []replayPod, i int) (decision.Input, int32) {
	now := tr.Times[i]
	current := int32(len(pods))
	in := decision.Input{
		SpecReplicas: current, StatusReplicas: current,
		MinReplicas: spec.PodAutoscaler.Spec.MinReplicasOrDefault(), MaxReplicas: spec.PodAutoscaler.Spec.MaxReplicas,
		Behavior: spec.Behavior, Config: m.Config, Now: now,
	}
	var ready int32
	for _, p := range pods {
		rp := replicas.Pod{Name: p.name, Phase: corev1.PodRunning, Start: p.created, Requests: m.Requests.Pod,
			ContainerRequests: m.Requests.Containers, Ready: !now.Before(p.created.Add(m.ReadyDelay))}
		rp.ReadyTransition = p.created
		if rp.Ready {
			rp.ReadyTransition = p.created.Add(m.ReadyDelay)
			ready++
		}
		in.Pods = append(in.Pods, rp)
	}
	for k, ms := range spec.Metrics {
		dm := ms.decisionMetric()
		load := tr.Loads[k][i]
		var err error
		switch {
		case math.IsNaN(load):
			err = errNoData
		case ms.wholeTarget():
			dm.Values, err = wholeValue(ms.Target, load, ready)
		case ready > 0:
			dm.Samples, err = shareLoad(load, in.Pods, ready, now)
		}
		if err != nil {
			dm.FetchErr = fmt.Errorf("%s %s at %s: %w", ms.Kind, ms.Name, now.UTC().Format(time.RFC3339), err)
		}
		in.Metrics = append(in.Metrics, dm)
	}
	return in, ready
}

// shareLoad spreads load evenly over the ready pods, in milli-units. A share that is not a
// value the autoscaler computes with (+Inf, beyond int64 milli-units, negative) is an error, as
// the live autoscaler's metric would be.
func shareLoad(load float64, pods []replicas.Pod, ready int32, now time.Time) (map[string]replicas.Sample, error) {
	per, err := replicas.MilliFromFloat(load / float64(ready))
	if err != nil {
		return nil, fmt.Errorf("load %g over %d ready pods: %w", load, ready, err)
	}
	out := make(map[string]replicas.Sample, ready)
	for _, p := range pods {
		if p.Ready {
			out[p.Name] = replicas.Sample{Value: per, Timestamp: now, Window: time.Minute}
		}
	}
	return out, nil
}

// wholeValue is the value an Object or External metric reads at a step of load, in milli-units, as
// the one value the calculator sums: the value itself for an AverageValue target, and for a Value
// target the load shared by the ready pods (see valueLoads). A value that is not one the
// autoscaler computes with is an error, as the live metric's would be.
func wholeValue(t replicas.Target, load float64, ready int32) ([]int64, error) {
	if t.Type == replicas.Value {
		load /= float64(max(ready, 1))
	}
	v, err := replicas.MilliFromFloat(load)
	if err != nil {
		return nil, fmt.Errorf("value %g: %w", load, err)
	}
	return []int64{v}, nil
}

// resize brings pods to n: new pods are created at now, a scale-down removes the newest.
func resize(pods []replayPod, n int32, now time.Time, step int) []replayPod {
	if int(n) <= len(pods) {
		return pods[:n]
	}
	return newPods(pods, n, now, step)
}

// newPods appends pods created at created until there are n.
func newPods(pods []replayPod, n int32, created time.Time, step int) []replayPod {
	for i := len(pods); i < int(n); i++ {
		pods = append(pods, replayPod{name: fmt.Sprintf("replay-%d-%d", step, i), created: created})
	}
	return pods
}
