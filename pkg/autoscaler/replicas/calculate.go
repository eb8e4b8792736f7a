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
	// Samples are the metric's per-pod samples, keyed by pod name. Samples of unknown pods are
	// unused; for a ContainerResource target, a pod whose metrics lack the container has none and
	// counts as missing, as upstream's getContainerMetrics (1.36) has it.
	Samples map[string]Sample
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
// GetRawResourceReplicas and GetMetricReplicas do, except that a pod whose in-place resize is in
// flight never lowers a Utilization proposal (resizeHolds). The errors wrap ErrInvalidTarget, ErrNoPods,
// ErrNoMetrics, ErrMissingRequest, ErrValueOutOfRange or ErrNegativeValue.
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
	g := groupPods(in.Pods, in.Samples, in.Target.Resource, in.Config, in.Now)
	if g.err != nil {
		return Result{}, g.err
	}
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
	if !scaleUpWithIgnored && len(g.missing) == 0 && !resizeHolds(in.Target, g, u.ratio) {
		res.Replicas = in.CurrentReplicas
		if !tol.Within(u.ratio) {
			res.Replicas = ceilReplicas(u.ratio * float64(len(g.ready)))
		}
		return res, nil
	}
	res.Replicas, err = rebalance(in, g, requests, u.ratio)
	return res, err
}

// resizeHolds reports whether a Utilization target's scale-down must be recomputed with the pods
// whose in-place resize is in flight counted as using the target (see rebalance): while their
// requests change, their utilization is no evidence for a scale-in (kubernetes#142155).
func resizeHolds(t Target, g groups, ratio float64) bool {
	return t.Type == Utilization && len(g.resizing) > 0 && ratio < 1.0
}

// rebalance recomputes the proposal after filling in missing and ignored pods: on a scale-down,
// missing pods count as using the target (100% of their request, or the target if above 100%),
// and so do, for a Utilization target, the pods whose in-place resize is in flight, whatever their
// samples say; on a scale-up, missing and ignored pods count as using nothing, and resizing pods
// as measured against their requests in effect. It keeps the current replicas when the new ratio
// is within tolerance or the fill-in would reverse the direction of the scale.
//
//nolint:gocyclo // one branch per rule of upstream's calcPlainMetricReplicas, kept in its order so the two read side by side
func rebalance(in Input, g groups, requests map[string]int64, ratio float64) (int32, error) {
	values := make(map[string]int64, len(g.ready)+len(g.missing)+len(g.ignored))
	for name, v := range g.ready {
		values[name] = v
	}
	if resizeHolds(in.Target, g, ratio) {
		for _, name := range g.resizing {
			v, err := in.Target.fallback(requests[name])
			if err != nil {
				return 0, fmt.Errorf("resizing pod %s: %w", name, err)
			}
			values[name] = v
		}
	}
	for _, name := range g.missing {
		switch {
		case ratio < 1.0:
			v, err := in.Target.fallback(requests[name])
			if err != nil {
				return 0, fmt.Errorf("missing pod %s: %w", name, err)
			}
			values[name] = v
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

// fallback is the value a missing pod is assumed to use on a scale-down: request ×
// max(100, utilization) / 100 for a Utilization target, else the target.
func (t Target) fallback(request int64) (int64, error) {
	if t.Type == Utilization {
		return mulDiv(request, int64(max(100, t.Utilization)), 100)
	}
	return t.AverageValue, nil
}

// usageOf computes the usage of values against the target. Utilization is the sum of the values over
// the sum of the same pods' requests, truncated to a whole percent before the ratio, as upstream.
// The arithmetic is upstream's in int64 milli-units, except that a sum beyond int64 or a
// utilization beyond int32 is ErrValueOutOfRange where upstream's overflows.
func (t Target) usageOf(values map[string]int64, requests map[string]int64) (usage, error) {
	var total, requested checkedSum
	for name, v := range values {
		total.add(v)
		requested.add(requests[name])
	}
	if total.err != nil {
		return usage{}, fmt.Errorf("usage of %d pods: %w", len(values), total.err)
	}
	if requested.err != nil {
		return usage{}, fmt.Errorf("%s requests of %d pods: %w", t.Resource, len(values), requested.err)
	}
	average := total.total / int64(len(values))
	if t.Type != Utilization {
		return usage{ratio: float64(average) / float64(t.AverageValue), average: average}, nil
	}
	if requested.total <= 0 {
		return usage{}, fmt.Errorf("%s requests of the sampled pods sum to zero: %w", t.Resource, ErrMissingRequest)
	}
	utilization, err := mulDiv(total.total, 100, requested.total)
	if err == nil && utilization > math.MaxInt32 {
		err = fmt.Errorf("utilization %d%% of the %s request: %w", utilization, t.Resource, ErrValueOutOfRange)
	}
	if err != nil {
		return usage{}, err
	}
	return usage{
		ratio:       float64(utilization) / float64(t.Utilization),
		average:     average,
		utilization: int32(utilization),
	}, nil
}

// requestsOf returns every live pod's request for a Utilization target's resource; a live pod
// without that request is an error, as upstream's calculateRequests. For a ContainerResource
// target only that container's request counts, and a pod without the container is an error
// (ErrContainerNotFound), as upstream's calculateRequests.
func requestsOf(live []Pod, t Target) (map[string]int64, error) {
	if t.Type != Utilization {
		return nil, nil
	}
	requests := make(map[string]int64, len(live))
	for _, pod := range live {
		if err := pod.RequestErrs[t.Resource]; err != nil {
			return nil, fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		have := pod.Requests
		if t.Container != "" {
			var ok bool
			if have, ok = pod.ContainerRequests[t.Container]; !ok {
				return nil, fmt.Errorf("container %s of pod %s: %w", t.Container, pod.Name, ErrContainerNotFound)
			}
		}
		r, ok := have[t.Resource]
		if !ok {
			return nil, fmt.Errorf("pod %s has no %s request%s: %w", pod.Name, t.Resource, inContainer(t.Container), ErrMissingRequest)
		}
		if r < 0 {
			return nil, fmt.Errorf("pod %s: %s request%s of %dm: %w", pod.Name, t.Resource, inContainer(t.Container), r, ErrNegativeValue)
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
