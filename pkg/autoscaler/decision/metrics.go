package decision

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

var (
	// ErrNoMetricSpecs means the autoscaler has no metrics to scale on.
	ErrNoMetricSpecs = errors.New("no metrics specified")
	// ErrUnknownMetricKind means a metric's kind is none of Resource, Pods, External, Object and ContainerResource.
	ErrUnknownMetricKind = errors.New("unknown metric source type")
)

// combined is the combination of all metrics' proposals.
type combined struct {
	// replicas is the largest valid proposal.
	replicas int32
	// metric describes the metric that proposed it.
	metric string
	// statuses has one entry per metric.
	statuses []MetricStatus
	// invalid counts the failed metrics.
	invalid int
	// firstFailure is the first failed metric's status.
	firstFailure MetricStatus
	// forecast is the forecast's proposal, forecastFrom the metric it forecasts, raised whether
	// it replaced the metrics' proposal (see withForecast).
	forecast     int32
	forecastFrom string
	// forecastEach is the forecast's proposal per metric, by its ID.
	forecastEach map[MetricID]int32
	raised       bool
}

// err summarizes the failed metrics, wrapping the first failure, as upstream.
func (c combined) err(total int) error {
	if total == 0 {
		return ErrNoMetricSpecs
	}
	if c.invalid == 0 {
		return nil
	}
	return fmt.Errorf("invalid metrics (%d invalid out of %d), first error is: %w", c.invalid, total, c.firstFailure.Err)
}

// combine computes every metric's proposal and keeps the largest, as upstream's
// computeReplicasForMetrics.
func combine(in Input) combined {
	cfg := in.Config.Replicas
	cfg.Tolerances = tolerances(in)
	c := combined{statuses: make([]MetricStatus, 0, len(in.Metrics))}
	for _, m := range in.Metrics {
		s := compute(in, m, cfg)
		c.statuses = append(c.statuses, s)
		if !s.Proposes() {
			if c.invalid == 0 {
				c.firstFailure = s
			}
			c.invalid++
			continue
		}
		if c.replicas == 0 || s.Result.Replicas > c.replicas {
			c.replicas, c.metric = s.Result.Replicas, s.Description
		}
	}
	return c
}

// tolerances returns the configured tolerances overridden by the behavior's per-direction ones.
func tolerances(in Input) replicas.Tolerances {
	t := in.Config.Replicas.Tolerances
	if in.Behavior == nil {
		return t
	}
	if r := in.Behavior.ScaleUp; r != nil && r.Tolerance != nil {
		t.ScaleUp = *r.Tolerance
	}
	if r := in.Behavior.ScaleDown; r != nil && r.Tolerance != nil {
		t.ScaleDown = *r.Tolerance
	}
	return t
}

// compute proposes replicas for one metric; one path serves every per-pod metric (Resource, Pods,
// ContainerResource), another every metric of the whole target (External, Object).
func compute(in Input, m Metric, cfg replicas.Config) MetricStatus {
	target := m.Target
	switch m.Kind {
	case ResourceMetric:
		if target.Resource == "" {
			target.Resource = corev1.ResourceName(m.Name)
		}
	case ContainerResourceMetric:
		if target.Resource == "" {
			target.Resource = corev1.ResourceName(m.Name)
		}
	case PodsMetric, ExternalMetric, ObjectMetric:
		target.Resource, target.Container = "", ""
	}
	s := MetricStatus{Kind: m.Kind, Name: m.Name, Description: describe(m, target), Target: target, FailureReason: failureReason(m.Kind)}
	if m.Kind == ObjectMetric {
		s.DescribedObject = m.DescribedKind + "/" + m.DescribedName
	}
	s.Fallback = m.Fallback
	if m.FetchErr != nil {
		s.Err = fmt.Errorf("get %s: %w", s.Description, m.FetchErr)
		return withFallback(s, m, in.Now)
	}
	var err error
	switch m.Kind {
	case ResourceMetric, PodsMetric, ContainerResourceMetric:
		s.Result, err = replicas.Calculate(replicas.Input{
			CurrentReplicas: in.SpecReplicas, Target: target, Pods: in.Pods, Samples: m.Samples,
			Config: cfg, Now: in.Now,
		})
	case ObjectMetric:
		if len(m.Values) != 1 {
			err = fmt.Errorf("%d values for one object: %w", len(m.Values), replicas.ErrNoMetrics)
			break
		}
		s.Result, err = replicas.CalculateObject(replicas.ObjectInput{
			SpecReplicas: in.SpecReplicas, StatusReplicas: in.StatusReplicas, Target: target, Value: m.Values[0], Pods: in.Pods, Tolerances: cfg.Tolerances,
		})
	case ExternalMetric:
		s.Result, err = replicas.CalculateExternal(replicas.ExternalInput{
			SpecReplicas: in.SpecReplicas, StatusReplicas: in.StatusReplicas, Target: target, Values: m.Values, Pods: in.Pods, Tolerances: cfg.Tolerances,
		})
	default:
		err = fmt.Errorf("%q: %w", m.Kind, ErrUnknownMetricKind)
	}
	if err != nil {
		s.Result, s.Err = replicas.Result{}, fmt.Errorf("compute replicas for %s: %w", s.Description, err)
	}
	return s
}

// describe names a metric as upstream's metricNameProposal does.
func describe(m Metric, target replicas.Target) string {
	kind, name := m.Kind, m.Name
	switch {
	case kind == ResourceMetric && target.Type == replicas.Utilization:
		return fmt.Sprintf("%s resource utilization (percentage of request)", target.Resource)
	case kind == ResourceMetric:
		return fmt.Sprintf("%s resource", target.Resource)
	case kind == ContainerResourceMetric && target.Type == replicas.Utilization:
		return fmt.Sprintf("%s container resource utilization (percentage of request)", target.Resource)
	case kind == ContainerResourceMetric:
		return fmt.Sprintf("%s container resource", target.Resource)
	case kind == PodsMetric:
		return "pods metric " + name
	case kind == ExternalMetric:
		return "external metric " + name
	case kind == ObjectMetric && m.DescribedKind != "":
		return fmt.Sprintf("%s metric %s", m.DescribedKind, name)
	}
	return fmt.Sprintf("%s metric %s", kind, name)
}

// failureReason is the ScalingActive reason for a failed metric of kind.
func failureReason(kind MetricKind) string {
	switch kind {
	case ResourceMetric:
		return ReasonFailedGetResourceMetric
	case PodsMetric:
		return ReasonFailedGetPodsMetric
	case ExternalMetric:
		return ReasonFailedGetExternalMetric
	case ObjectMetric:
		return ReasonFailedGetObjectMetric
	case ContainerResourceMetric:
		return ReasonFailedGetContainerResourceMetric
	}
	return ReasonInvalidMetricSourceType
}
