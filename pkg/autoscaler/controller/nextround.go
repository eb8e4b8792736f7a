package controller

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
)

// minRoundGap is the shortest time between two rounds of one PodAutoscaler that an aligned
// schedule may choose, for a sync period of 2 s or more; a shorter period allows half of it (see
// nextRound).
const minRoundGap = time.Second

// newScrapeTracker returns the tracker of the metrics' landing times, or nil when rounds keep a
// fixed period.
func newScrapeTracker(cfg Config) (*metrics.ScrapeTracker, error) {
	if !cfg.Options.AlignToScrapes || cfg.SampleTimes == nil {
		return nil, nil
	}
	tr, err := metrics.NewScrapeTracker(metrics.ScrapeTrackerConfig{
		Source: cfg.SampleTimes, Clock: cfg.Clock, Freshness: cfg.Options.SyncPeriod / 2, Timeout: cfg.Options.SyncPeriod,
	})
	if err != nil {
		return nil, fmt.Errorf("build scrape tracker: %w", err)
	}
	return tr, nil
}

// nextRound returns how long until pa's next round. With a known landing cadence of its first
// Prometheus-backed metric (the first pods metric, else the first object metric, else the first
// external metric), the round runs ScrapeMargin after the landing nearest one sync period from
// now (metrics.Cadence.Next): the stock HPA decides on a fixed phase and waits 7.5 s on average
// after the data is in Prometheus; this decides right after it lands. Rounds stay one sync
// period apart on average; the first aligned round comes at most half a scrape interval early
// or late. The cadence is only looked up here: when it is due for a check, the check runs in
// the background (metrics.ScrapeTracker.Known), so a slow Prometheus never holds a worker.
// Without a cadence (none learnt yet, resource metrics only, alignment off) it is the period.
// The period is pa's own spec.behavior.syncPeriodSeconds when set (KEP-6003), else the controller's.
// ctx bounds that background check: give it the run's, never a round's that ends with the round
// (the check would be cut off before the answer and asked again at every round).
func (c *Controller) nextRound(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler) time.Duration {
	period := c.syncPeriodOf(pa)
	if c.scrapes == nil || pa == nil {
		return period
	}
	landing, metric := c.landingOf(pa)
	if metric == "" {
		return period
	}
	cadence := c.scrapes.Known(ctx, landing)
	now := c.clock.Now()
	// The gap is counted from the round's end, which comes after the landing it followed: a 1 s
	// gap would skip every other landing of a 1 s period on 1 s scrapes.
	next, aligned := cadence.Next(now, period, c.opts.ScrapeMargin, min(minRoundGap, period/2), c.scrapes.Refresh())
	klog.FromContext(ctx).V(5).Info("Next round", "podAutoscaler", klog.KObj(pa), "in", next.Sub(now), "aligned", aligned,
		"metric", metric, "lastLanding", cadence.Last, "scrapeInterval", cadence.Interval)
	return next.Sub(now)
}

// landingOf returns the landing of the metric pa's rounds follow and its name; no name when pa
// has no metric from Prometheus (or its selector is invalid: the round reports that).
func (c *Controller) landingOf(pa *podpilotv1alpha1.PodAutoscaler) (metrics.Landing, string) {
	spec, ns := pa.Spec, pa.Namespace
	var name string
	var selector *podpilotv1alpha1.MetricSelector
	var landing func(labels.Selector) metrics.Landing
	switch {
	case len(spec.CustomMetrics) > 0:
		m := spec.CustomMetrics[0]
		name, selector = m.MetricName, m.Selector
		landing = func(sel labels.Selector) metrics.Landing { return c.scrapes.PodsLanding(ns, m.MetricName, sel) }
	case len(spec.ObjectMetrics) > 0:
		m := spec.ObjectMetrics[0]
		name, selector = m.MetricName, m.Selector
		landing = func(sel labels.Selector) metrics.Landing {
			return c.scrapes.ObjectLanding(ns, describedKind(m.DescribedObject), m.MetricName, sel)
		}
	case len(spec.ExternalMetrics) > 0:
		m := spec.ExternalMetrics[0]
		name, selector = m.MetricName, m.Selector
		landing = func(sel labels.Selector) metrics.Landing { return c.scrapes.ExternalLanding(ns, m.MetricName, sel) }
	default:
		return metrics.Landing{}, ""
	}
	sel, err := specconv.MetricSelector(selector)
	if err != nil {
		return metrics.Landing{}, ""
	}
	return landing(sel), name
}

// syncPeriodOf returns the period of pa's rounds: its spec.behavior.syncPeriodSeconds when set
// (KEP-6003), else --autoscaler-sync-period; the controller's for a nil pa.
func (c *Controller) syncPeriodOf(pa *podpilotv1alpha1.PodAutoscaler) time.Duration {
	if pa == nil {
		return c.opts.SyncPeriod
	}
	return specconv.SyncPeriod(pa.Spec.Behavior, c.opts.SyncPeriod)
}
