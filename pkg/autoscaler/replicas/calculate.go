package replicas

import (
	"fmt"
	"math"
	"time"
)

// Input is everything needed to propose replicas for one per-pod metric (resource or pods metric).
type Input struct {
	// CurrentReplicas is the scale target's spec.replicas.
	CurrentReplicas int32
	// Target is the metric's target; Target.Resource is empty for custom (pods) metrics.
	Target Target
	// Pods are the pods selected by the scale target's selector.
	Pods []Pod
	// Samples are the metric's per-pod samples, keyed by pod name. Samples of unknown pods are unused.
	Samples map[string]Sample
	// NoContainer names the pods whose metrics were listed without Target.Container (for a
	// ContainerResource target); any of Pods among them fails the metric.
	NoContainer map[string]bool
	// Config holds tolerances and the cpu readiness settings.
	Config Config
	// Now is the time of this computation.
	Now time.Time
}

// usage is the usage of one set of pod values against the target.
type usage struct {
	ratio       float64
	average     int64
	utilization int32
}

// Calculate proposes a replica count for a per-pod metric, as upstream's GetResourceReplicas,
// GetRawResourceReplicas and GetMetricReplicas do. The errors wrap ErrInvalidTarget, ErrNoPods,
// ErrNoMetrics or ErrMissingRequest.
func Calculate(in Input) (Result, error) {
	if err := in.Target.validate(); err != nil {
		return Result{}, err
	}
	if in.Target.Type == Value {
		return Result{}, fmt.Errorf("value target for a per-pod metric: %w", ErrInvalidTarget)
	}
	if len(in.Pods) == 0 {
		return Result{}, ErrNoPods
	}
	if err := containerPresent(in); err != nil {
		return Result{}, err
	}
	g := groupPods(in.Pods, in.Samples, in.Target.Resource, in.Config, in.Now)
	if len(g.ready) == 0 {
		return Result{}, ErrNoMetrics
	}
	requests, err := requestsOf(g.live, in.Target)
	if err != nil {
		return Result{}, err
	}
	u, err := in.Target.usageOf(g.ready, requests)
	if err != nil {
		return Result{}, err
	}
	res := Result{
		UsageRatio:   u.ratio,
		AverageValue: u.average,
		Utilization:  u.utilization,
		Ready:        len(g.ready),
		Missing:      len(g.missing),
		Ignored:      len(g.ignored),
		Timestamp:    g.oldest,
	}
	tol := in.Config.Tolerances
	scaleUpWithIgnored := len(g.ignored) > 0 && u.ratio > 1.0
	if !scaleUpWithIgnored && len(g.missing) == 0 {
		res.Replicas = in.CurrentReplicas
		if !tol.Within(u.ratio) {
			res.Replicas = ceilReplicas(u.ratio * float64(len(g.ready)))
		}
		return res, nil
	}
	res.Replicas, err = rebalance(in, g, requests, u.ratio)
	return res, err
}

// rebalance recomputes the proposal after filling in missing and ignored pods: on a scale-down,
// missing pods count as using the target (100% of their request, or the target if above 100%);
// on a scale-up, missing and ignored pods count as using nothing. It keeps the current replicas when
// the new ratio is within tolerance or the fill-in would reverse the direction of the scale.
//
//nolint:gocyclo // one branch per rule of upstream's calcPlainMetricReplicas, kept in its order so the two read side by side
func rebalance(in Input, g groups, requests map[string]int64, ratio float64) (int32, error) {
	values := make(map[string]int64, len(g.ready)+len(g.missing)+len(g.ignored))
	for name, v := range g.ready {
		values[name] = v
	}
	for _, name := range g.missing {
		switch {
		case ratio < 1.0:
			values[name] = in.Target.fallback(requests[name])
		case ratio > 1.0:
			values[name] = 0
		}
	}
	if len(g.ignored) > 0 && ratio > 1.0 {
		for _, name := range g.ignored {
			values[name] = 0
		}
	}
	u, err := in.Target.usageOf(values, requests)
	if err != nil {
		return 0, err
	}
	current := in.CurrentReplicas
	if in.Config.Tolerances.Within(u.ratio) || (ratio < 1.0 && u.ratio > 1.0) || (ratio > 1.0 && u.ratio < 1.0) {
		return current, nil
	}
	proposal := ceilReplicas(u.ratio * float64(len(values)))
	if (u.ratio < 1.0 && proposal > current) || (u.ratio > 1.0 && proposal < current) {
		return current, nil
	}
	return proposal, nil
}

// fallback is the value a missing pod is assumed to use on a scale-down.
func (t Target) fallback(request int64) int64 {
	if t.Type == Utilization {
		return request * int64(max(100, t.Utilization)) / 100
	}
	return t.AverageValue
}

// usageOf computes the usage of values against the target. Utilization is the sum of the values over
// the sum of the same pods' requests, truncated to a whole percent before the ratio, as upstream.
func (t Target) usageOf(values map[string]int64, requests map[string]int64) (usage, error) {
	var total, requested int64
	for name, v := range values {
		total += v
		requested += requests[name]
	}
	average := total / int64(len(values))
	if t.Type != Utilization {
		return usage{ratio: float64(average) / float64(t.AverageValue), average: average}, nil
	}
	if requested <= 0 {
		return usage{}, fmt.Errorf("%s requests of the sampled pods sum to zero: %w", t.Resource, ErrMissingRequest)
	}
	utilization := int32(total * 100 / requested)
	return usage{
		ratio:       float64(utilization) / float64(t.Utilization),
		average:     average,
		utilization: utilization,
	}, nil
}

// containerPresent fails a ContainerResource target when the metrics of one of the pods were
// listed without its container, as upstream's getContainerMetrics.
func containerPresent(in Input) error {
	if in.Target.Container == "" || len(in.NoContainer) == 0 {
		return nil
	}
	for _, pod := range in.Pods {
		if in.NoContainer[pod.Name] {
			return fmt.Errorf("container %s, pod %s: %w", in.Target.Container, pod.Name, ErrContainerNotPresent)
		}
	}
	return nil
}

// requestsOf returns every live pod's request for a Utilization target's resource; a live pod
// without that request is an error, as upstream's calculateRequests. For a ContainerResource
// target only that container's request counts, and a pod without the container requests 0.
func requestsOf(live []Pod, t Target) (map[string]int64, error) {
	if t.Type != Utilization {
		return nil, nil
	}
	requests := make(map[string]int64, len(live))
	for _, pod := range live {
		have := pod.Requests
		if t.Container != "" {
			var ok bool
			if have, ok = pod.ContainerRequests[t.Container]; !ok {
				requests[pod.Name] = 0
				continue
			}
		}
		r, ok := have[t.Resource]
		if !ok {
			return nil, fmt.Errorf("pod %s has no %s request%s: %w", pod.Name, t.Resource, inContainer(t.Container), ErrMissingRequest)
		}
		requests[pod.Name] = r
	}
	return requests, nil
}

// inContainer names a container in a message, or nothing.
func inContainer(container string) string {
	if container == "" {
		return ""
	}
	return " in container " + container
}

// ceilReplicas rounds a replica count up, saturating at the largest int32.
func ceilReplicas(f float64) int32 {
	c := math.Ceil(f)
	if c >= math.MaxInt32 {
		return math.MaxInt32
	}
	if c <= 0 {
		return 0
	}
	return int32(c)
}
