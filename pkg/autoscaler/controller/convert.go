package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
)

// metricsOf returns pa's metrics in the order of status.currentMetrics (custom, resource,
// object, external, container resource), each with this round's samples or the error that kept
// them from being read; an error never becomes a zero sample.
func (c *Controller) metricsOf(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, rec *reconcile) []decision.Metric {
	s := &pa.Spec
	out := make([]decision.Metric, 0, len(s.CustomMetrics)+len(s.ResourceMetrics)+len(s.ObjectMetrics)+len(s.ExternalMetrics)+len(s.ContainerResourceMetrics))
	for _, m := range pa.Spec.CustomMetrics {
		start := c.clock.Now()
		dm := decision.Metric{Kind: decision.PodsMetric, Name: m.MetricName, Target: customTarget(m)}
		sel, err := metricSelector(m.Selector)
		if err == nil {
			dm.Samples, err = c.fetcher.PodMetric(ctx, pa.Namespace, m.MetricName, sel)
		}
		dm.FetchErr = err
		rec.fetched(start)
		out = append(out, dm)
	}
	for _, m := range pa.Spec.ResourceMetrics {
		start := c.clock.Now()
		dm := decision.Metric{Kind: decision.ResourceMetric, Name: string(m.ResourceName), Target: resourceTarget(m)}
		dm.Samples, dm.FetchErr = c.fetcher.ResourceMetric(ctx, pa.Namespace, m.ResourceName)
		rec.fetched(start)
		out = append(out, dm)
	}
	return c.kindMetricsOf(ctx, pa, rec, out)
}

// metricSelector converts a custom metric's selector; nil selects every series.
func metricSelector(s *metav1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return nil, fmt.Errorf("metric selector: %w", err)
	}
	return sel, nil
}

func customTarget(m podpilotv1alpha1.CustomMetricSpec) replicas.Target {
	return replicas.Target{Type: replicas.AverageValue, AverageValue: m.AverageValue.MilliValue()}
}

// resourceTarget converts a resource target; an unset value stays zero, which the calculator
// rejects as an invalid target.
func resourceTarget(m podpilotv1alpha1.ResourceMetricSpec) replicas.Target {
	t := replicas.Target{Resource: m.ResourceName}
	switch m.TargetType {
	case podpilotv1alpha1.UtilizationMetricType:
		t.Type = replicas.Utilization
		if m.AverageUtilization != nil {
			t.Utilization = *m.AverageUtilization
		}
	case podpilotv1alpha1.AverageValueMetricType:
		t.Type = replicas.AverageValue
		if m.AverageValue != nil {
			t.AverageValue = m.AverageValue.MilliValue()
		}
	}
	return t
}

// behaviorOf converts the spec's behavior. Without one, normalize applies the
// HPA's legacy normalization (downscale stabilization window from the flag,
// scale-up limit max(2 × current, 4)); unset fields of a behavior take the
// autoscaling/v2 defaults in normalize. The spec itself is never defaulted.
func behaviorOf(b *podpilotv1alpha1.PodAutoscalerBehavior) *normalize.Behavior {
	if b == nil {
		return nil
	}
	return &normalize.Behavior{ScaleUp: rulesOf(b.ScaleUp), ScaleDown: rulesOf(b.ScaleDown)}
}

func rulesOf(r *podpilotv1alpha1.ScalingRules) *normalize.Rules {
	if r == nil {
		return nil
	}
	out := &normalize.Rules{}
	if r.StabilizationWindowSeconds != nil {
		w := time.Duration(*r.StabilizationWindowSeconds) * time.Second
		out.StabilizationWindow = &w
	}
	if r.SelectPolicy != nil {
		out.SelectPolicy = normalize.SelectPolicy(*r.SelectPolicy)
	}
	for _, p := range r.Policies {
		out.Policies = append(out.Policies, normalize.Policy{
			Type: normalize.PolicyType(p.Type), Value: p.Value, Period: time.Duration(p.PeriodSeconds) * time.Second,
		})
	}
	if r.Tolerance != nil {
		t := r.Tolerance.AsApproximateFloat64()
		out.Tolerance = &t
	}
	return out
}

// historyOf reads the history persisted in status.
func historyOf(s podpilotv1alpha1.PodAutoscalerStatus) normalize.History {
	var h normalize.History
	for _, r := range s.Recommendations {
		h.Recommendations = append(h.Recommendations, normalize.Recommendation{Replicas: r.Replicas, Time: r.Timestamp.Time})
	}
	if s.ScaleEvents != nil {
		h.ScaleUpEvents = eventsOf(s.ScaleEvents.ScaleUp)
		h.ScaleDownEvents = eventsOf(s.ScaleEvents.ScaleDown)
	}
	return h
}

func eventsOf(in []podpilotv1alpha1.ScaleEvent) []normalize.ScaleEvent {
	var out []normalize.ScaleEvent
	for _, e := range in {
		out = append(out, normalize.ScaleEvent{Change: e.ReplicaChange, Time: e.Timestamp.Time})
	}
	return out
}

// persistHistory writes h into status, each list keeping its newest entries within the CRD bounds.
// Recommendations are runs (see normalize.History); status keeps whole seconds, so an ended run's
// time is rounded up (a window then holds it a little longer, never shorter) and the ongoing run's
// start down.
func persistHistory(s *podpilotv1alpha1.PodAutoscalerStatus, h normalize.History) {
	recs := make([]podpilotv1alpha1.Recommendation, 0, len(h.Recommendations))
	for i, r := range h.Recommendations {
		t := r.Time.Truncate(time.Second)
		if i < len(h.Recommendations)-1 && !t.Equal(r.Time) {
			t = t.Add(time.Second)
		}
		recs = append(recs, podpilotv1alpha1.Recommendation{Replicas: r.Replicas, Timestamp: metav1.NewTime(t)})
	}
	s.Recommendations = newest(recs, podpilotv1alpha1.MaxRecommendations)
	if len(s.Recommendations) == 0 {
		s.Recommendations = nil
	}
	up := newest(scaleEventsOf(h.ScaleUpEvents), podpilotv1alpha1.MaxScaleEvents)
	down := newest(scaleEventsOf(h.ScaleDownEvents), podpilotv1alpha1.MaxScaleEvents)
	s.ScaleEvents = nil
	if len(up) > 0 || len(down) > 0 {
		s.ScaleEvents = &podpilotv1alpha1.ScaleEvents{ScaleUp: up, ScaleDown: down}
	}
}

func scaleEventsOf(in []normalize.ScaleEvent) []podpilotv1alpha1.ScaleEvent {
	var out []podpilotv1alpha1.ScaleEvent
	for _, e := range in {
		out = append(out, podpilotv1alpha1.ScaleEvent{ReplicaChange: e.Change, Timestamp: metav1.NewTime(e.Time)})
	}
	return out
}

// newest returns the last n entries of s, dropping the oldest.
func newest[T any](s []T, n int) []T {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
