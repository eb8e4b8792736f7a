package replicas

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// groups is the partition of the live pods made by groupPods.
type groups struct {
	// ready maps the pods whose samples are used to their values.
	ready map[string]int64
	// missing lists live pods without a sample.
	missing []string
	// ignored lists pending or not-yet-ready pods; their samples are dropped.
	ignored []string
	// resizing lists the pods among ready whose in-place resize is in flight.
	resizing []string
	// live lists every pod that is neither deleted nor finished.
	live []Pod
	// oldest is the oldest timestamp among the used samples.
	oldest time.Time
	// err is the first used sample's error: a value that could not be read, or a negative one.
	err error
}

// groupPods partitions pods as upstream's groupPods does: deleted, failed and succeeded pods are
// discarded; pending pods are ignored for every metric; pods without a sample are missing; for cpu,
// pods that are not ready, or whose sample may cover their initialization, are ignored. The first
// used sample that cannot be computed with (see sampleErr) is the groups' err.
func groupPods(pods []Pod, samples map[string]Sample, resource corev1.ResourceName, cfg Config, now time.Time) groups {
	// Sized by the target's pods: samples holds the whole namespace, shared by every autoscaler in it.
	g := groups{ready: make(map[string]int64, min(len(pods), len(samples)))}
	for _, pod := range pods {
		if pod.Deleted || pod.Phase == corev1.PodFailed || pod.Phase == corev1.PodSucceeded {
			continue
		}
		g.live = append(g.live, pod)
		if pod.Phase == corev1.PodPending {
			g.ignored = append(g.ignored, pod.Name)
			continue
		}
		sample, found := samples[pod.Name]
		if !found {
			g.missing = append(g.missing, pod.Name)
			continue
		}
		if resource == corev1.ResourceCPU && cpuUnready(pod, sample, cfg, now) {
			g.ignored = append(g.ignored, pod.Name)
			continue
		}
		if g.err == nil {
			g.err = sampleErr(pod.Name, sample)
		}
		g.ready[pod.Name] = sample.Value
		if pod.Resizing {
			g.resizing = append(g.resizing, pod.Name)
		}
		if g.oldest.IsZero() || sample.Timestamp.Before(g.oldest) {
			g.oldest = sample.Timestamp
		}
	}
	return g
}

// sampleErr is why a used sample cannot be computed with: its conversion error, or a negative
// value, which no target can be compared with.
func sampleErr(pod string, s Sample) error {
	switch {
	case s.Err != nil:
		return fmt.Errorf("pod %s: %w", pod, s.Err)
	case s.Value < 0:
		return fmt.Errorf("pod %s: %dm: %w", pod, s.Value, ErrNegativeValue)
	}
	return nil
}

// cpuUnready reports whether a pod's cpu sample must be ignored. Within the cpu initialization period
// after start, the sample is ignored if the pod is not ready or the sample's window began before the
// pod last became ready. After it, the sample is ignored only if the pod is not ready and has never
// been ready (its Ready condition last changed within the initial readiness delay after start).
func cpuUnready(pod Pod, sample Sample, cfg Config, now time.Time) bool {
	if pod.ReadyTransition.IsZero() || pod.Start.IsZero() {
		return true
	}
	if pod.Start.Add(cfg.CPUInitializationPeriod).After(now) {
		return !pod.Ready || sample.Timestamp.Before(pod.ReadyTransition.Add(sample.Window))
	}
	return !pod.Ready && pod.Start.Add(cfg.DelayOfInitialReadinessStatus).After(pod.ReadyTransition)
}
