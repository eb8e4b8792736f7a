package controller

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/clock"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/normalize"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// metricsOf returns pa's metrics in the order of status.currentMetrics (custom, resource,
// object, external, container resource), each with this round's samples or the error that kept
// them from being read; an error never becomes a zero sample.
func (c *Controller) metricsOf(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, rec *reconcile) []decision.Metric {
	s := &pa.Spec
	r := &metricReads{clock: c.clock, rec: rec, namespace: pa.Namespace,
		out: make([]decision.Metric, 0, len(s.CustomMetrics)+len(s.ResourceMetrics)+len(s.ObjectMetrics)+len(s.ExternalMetrics)+len(s.ContainerResourceMetrics))}
	readEach(ctx, r, s.CustomMetrics, c.customMetric)
	readEach(ctx, r, s.ResourceMetrics, c.resourceMetric)
	readEach(ctx, r, s.ObjectMetrics, c.objectMetric)
	readEach(ctx, r, s.ExternalMetrics, c.externalMetric)
	readEach(ctx, r, s.ContainerResourceMetrics, c.containerResourceMetric)
	return r.out
}

// metricReads collects the metrics one PodAutoscaler's round reads.
type metricReads struct {
	clock     clock.PassiveClock
	rec       *reconcile
	namespace string
	out       []decision.Metric
}

// readEach appends, for each of specs, the metric read returns with its error as FetchErr,
// recording how long the read took.
func readEach[M any](ctx context.Context, r *metricReads, specs []M, read func(context.Context, string, M) (decision.Metric, error)) {
	for _, m := range specs {
		start := r.clock.Now()
		dm, err := read(ctx, r.namespace, m)
		dm.FetchErr = err
		r.rec.fetched(start)
		r.out = append(r.out, dm)
	}
}

// customMetric reads a custom (pods) metric of namespace.
func (c *Controller) customMetric(ctx context.Context, namespace string, m podpilotv1alpha1.CustomMetricSpec) (decision.Metric, error) {
	dm := decision.Metric{Kind: decision.PodsMetric, Name: m.MetricName, Target: specconv.CustomTarget(m)}
	sel, err := metricSelector(m.Selector)
	if err == nil {
		dm.Samples, err = c.fetcher.PodMetric(ctx, namespace, m.MetricName, sel)
	}
	return dm, err
}

// resourceMetric reads a resource (cpu, memory) metric of namespace.
func (c *Controller) resourceMetric(ctx context.Context, namespace string, m podpilotv1alpha1.ResourceMetricSpec) (decision.Metric, error) {
	// An unset target value reaches the calculator, which reports it as an invalid target.
	t, _ := specconv.ResourceTarget(m)
	dm := decision.Metric{Kind: decision.ResourceMetric, Name: string(m.ResourceName), Target: t}
	var err error
	dm.Samples, err = c.fetcher.ResourceMetric(ctx, namespace, m.ResourceName)
	return dm, err
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
