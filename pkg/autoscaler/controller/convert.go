package controller

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
	"github.com/podpilot/podpilot/pkg/autoscaler/telemetry"
)

// metricsOf returns pa's metrics in the order of status.currentMetrics (custom, resource,
// object, external, container resource), each with this round's samples or the error that kept
// them from being read; an error never becomes a zero sample. The metrics are read concurrently,
// within the round's read deadline (Options.readTimeout): a metric not read by then fails. A
// PodAutoscaler whose spec.behavior.syncPeriodSeconds is shorter than the controller's period
// takes no shared answer older than half its own period (metrics.WithFreshness).
func (c *Controller) metricsOf(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, rec *telemetry.Reconcile) []decision.Metric {
	ctx, cancel := context.WithTimeout(ctx, c.opts.readTimeout())
	defer cancel()
	if p := c.syncPeriodOf(pa); p < c.opts.SyncPeriod {
		ctx = metrics.WithFreshness(ctx, p/2) // a shorter period of its own reads fresher answers
	}
	reads := c.metricReads(pa)
	out := make([]decision.Metric, len(reads))
	took := make([]time.Duration, len(reads))
	var mu sync.Mutex
	var panicked any
	read := func(i int) {
		defer func() {
			if r := recover(); r != nil {
				mu.Lock()
				if panicked == nil {
					panicked = fmt.Sprintf("%v\n(reading metric %d of the round)\n%s", r, i, debug.Stack())
				}
				mu.Unlock()
			}
		}()
		start := c.clock.Now()
		dm, err := reads[i](ctx)
		dm.FetchErr = err
		out[i], took[i] = dm, c.clock.Since(start)
	}
	if len(reads) == 1 {
		read(0)
	} else {
		var wg sync.WaitGroup
		for i := range reads {
			wg.Go(func() { read(i) })
		}
		wg.Wait()
	}
	if panicked != nil {
		// A read runs on a goroutine of its own, where a panic would end the process: it
		// panics again here, in the round, which fails for this PodAutoscaler (syncRecovering).
		panic(panicked)
	}
	for i, d := range took {
		rec.Fetched(out[i].ID(), d)
	}
	return out
}

// metricRead reads one metric of a PodAutoscaler.
type metricRead func(context.Context) (decision.Metric, error)

// metricReads returns a read for each of pa's metrics, in the order of metricsOf.
func (c *Controller) metricReads(pa *podpilotv1alpha1.PodAutoscaler) []metricRead {
	s, ns := &pa.Spec, pa.Namespace
	out := make([]metricRead, 0, len(s.CustomMetrics)+len(s.ResourceMetrics)+len(s.ObjectMetrics)+len(s.ExternalMetrics)+len(s.ContainerResourceMetrics))
	out = appendReads(out, ns, s.CustomMetrics, c.customMetric)
	out = appendReads(out, ns, s.ResourceMetrics, c.resourceMetric)
	out = appendReads(out, ns, s.ObjectMetrics, c.objectMetric)
	out = appendReads(out, ns, s.ExternalMetrics, c.externalMetric)
	return appendReads(out, ns, s.ContainerResourceMetrics, c.containerResourceMetric)
}

// appendReads appends to reads one read of each of specs in namespace.
func appendReads[M any](reads []metricRead, namespace string, specs []M, read func(context.Context, string, M) (decision.Metric, error)) []metricRead {
	for _, m := range specs {
		reads = append(reads, func(ctx context.Context) (decision.Metric, error) { return read(ctx, namespace, m) })
	}
	return reads
}

// customMetric reads a custom (pods) metric of namespace.
func (c *Controller) customMetric(ctx context.Context, namespace string, m podpilotv1alpha1.CustomMetricSpec) (decision.Metric, error) {
	dm := decision.Metric{Kind: decision.PodsMetric, Name: m.MetricName, Target: specconv.CustomTarget(m)}
	sel, err := specconv.MetricSelector(m.Selector)
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
