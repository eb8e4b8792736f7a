package prediction

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/forecast"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
	"github.com/podpilot/podpilot/pkg/podcache"
)

// defaultStartup is the pods' start-up time assumed when none of the target's pods shows one.
const defaultStartup = time.Minute

// Lead time bounds, those of spec.prediction.leadTimeSeconds.
const (
	minLead = 15 * time.Second
	MaxLead = time.Hour
)

// errNoHistoryPlan means a metric's history cannot be asked for: its selector is invalid.
var errNoHistoryPlan = errors.New("no history: the metric selector is invalid")

// Round is the forecast's part of one round: the decision's input, and what the status
// shows once the decision is made.
type Round struct {
	mode    decision.ForecastMode
	lead    time.Duration
	metrics []metricForecast
}

// metricForecast is one metric's forecast at now + lead, or why it has none.
type metricForecast struct {
	// id names the metric the forecast is of: statuses and loads are joined to it by id.
	id     decision.MetricID
	fitted time.Time
	model  forecast.Method
	// point is the forecast load, and load the load provisioned for (point raised by the model's
	// headroom), in the metric's units; NaN without a forecast.
	point, load float64
	err         error
}

// Forecast returns the forecast of each of pa's metrics (ms) one lead time ahead, each named by
// its metric's identity: each metric's model, anchored on the metric's aggregate this round (the
// sum over the pods, or the value); the lead comes from the target's pods and syncPeriod (see
// observedLead). The zero Round when prediction is off. A nil m (no history source) forecasts
// nothing: each metric says why.
func (m *Models) Forecast(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, pods []*podcache.Pod, ms []decision.Metric, now time.Time,
	syncPeriod time.Duration) Round {
	mode := specconv.ForecastMode(pa.Spec.Prediction)
	if mode == "" {
		return Round{}
	}
	pr := Round{mode: mode, lead: specconv.LeadTime(pa.Spec.Prediction, observedLead(pods, syncPeriod))}
	plans := Plans(pa)
	for _, dm := range ms {
		mf := metricForecast{point: math.NaN(), load: math.NaN(), err: errNoHistoryPlan}
		if p, ok := plans[dm.ID()]; ok {
			mf = m.forecastMetric(ctx, p, dm, pr.lead, now)
		}
		mf.id = dm.ID()
		pr.metrics = append(pr.metrics, mf)
	}
	return pr
}

// forecastMetric forecasts one metric at now + lead from its model, anchored on the metric's
// aggregate this round; none when the model does not earn its place at lead (forecast.Model.Earns):
// the metric then scales reactively, and the status says why.
func (m *Models) forecastMetric(ctx context.Context, p Plan, dm decision.Metric, lead time.Duration, now time.Time) metricForecast {
	mf := metricForecast{point: math.NaN(), load: math.NaN()}
	f, err := m.get(ctx, p)
	switch {
	case err != nil:
		mf.err = err
		return mf
	case f.refused != nil:
		mf.err = f.refused
		return mf
	}
	mf.fitted, mf.model = f.at, f.model.Method
	if err := f.model.Earns(lead); err != nil {
		mf.err = fmt.Errorf("forecast %s: %w", dm.Name, err)
		return mf
	}
	v, err := f.model.AtFrom(now.Add(lead), now, aggregate(dm))
	if err != nil {
		mf.err = fmt.Errorf("forecast %s at %s: %w", dm.Name, now.Add(lead).UTC().Format(time.RFC3339), err)
		return mf
	}
	mf.point, mf.load = v, v*(1+f.model.Headroom)
	return mf
}

// forecastKey names a metric in the leader's memory of its forecasts: by its id, since two
// metrics may share a name (a resource of two containers, a metric of two objects).
func forecastKey(id decision.MetricID) string {
	return string(id.Kind) + "/" + id.Name + "/" + id.DescribedObject + "/" + id.Container
}

// Input is the decision's forecast input; nil when prediction is off.
func (pr Round) Input() *decision.Forecast {
	if pr.mode == "" {
		return nil
	}
	loads := make(map[decision.MetricID]float64, len(pr.metrics))
	for _, mf := range pr.metrics {
		loads[mf.id] = mf.load * 1000 // milli-units, as the decision reads loads
	}
	return &decision.Forecast{Mode: pr.mode, LeadTime: pr.lead, Loads: loads}
}

// aggregate is a metric's load this round in its units: the sum of its per-pod samples, or of
// its values; NaN when it failed.
func aggregate(m decision.Metric) float64 {
	if m.FetchErr != nil {
		return math.NaN()
	}
	var sum float64
	for _, s := range m.Samples {
		sum += float64(s.Value)
	}
	for _, v := range m.Values {
		sum += float64(v)
	}
	return sum / 1000
}

// observedLead is the time new capacity takes, plus one sync period: the 90th percentile over
// the target's ready pods of the time from the pod's creation (its start when the creation time
// is unknown) to Ready, which counts scheduling, image pulls and start-up (defaultStartup when
// no pod shows one), within the bounds of spec.prediction.leadTimeSeconds. The Ready condition
// keeps only its last transition: a pod Ready more than MaxLead after its creation has flapped
// or restarted since it started (or starts slower than any lead allowed) and shows no start-up.
func observedLead(pods []*podcache.Pod, syncPeriod time.Duration) time.Duration {
	var startups []time.Duration
	for _, p := range pods {
		from := p.CreationTimestamp.Time
		if from.IsZero() {
			from = p.StartTime.Time
		}
		if d := p.ReadyTransition.Sub(from); p.Ready && !from.IsZero() && d > 0 && d <= MaxLead {
			startups = append(startups, d)
		}
	}
	startup := defaultStartup
	if len(startups) > 0 {
		slices.Sort(startups)
		startup = startups[int(math.Ceil(0.9*float64(len(startups))))-1]
	}
	return min(max(startup+syncPeriod, minLead), MaxLead)
}

// Plans returns how to read the history of each of pa's metrics, by the metric's
// identity; none for a metric whose selector is invalid. A plan's key names what makes its
// history distinct: the metric's kind and name (and for a container resource metric the
// container, for an object metric the object), the pod name pattern or object and the selector.
func Plans(pa *podpilotv1alpha1.PodAutoscaler) map[decision.MetricID]Plan {
	s, ns := &pa.Spec, pa.Namespace
	window := specconv.HistoryWindow(s.Prediction)
	pods := podNamePattern(pa)
	podsGR := schema.GroupResource{Resource: "pods"}
	out := map[decision.MetricID]Plan{}
	plan := func(id decision.MetricID, kind string, sel *podpilotv1alpha1.MetricSelector, req metrics.HistoryRequest, how historyKind) {
		ls, err := specconv.MetricSelector(sel)
		if err != nil {
			return
		}
		req.Namespace, req.Selector = ns, ls
		key := modelKey{Key: forecast.Key{Namespace: ns, Metric: kind + "/" + req.Metric, Selector: req.Names + ";" + ls.String()}, window: window}
		out[id] = Plan{key: key, req: req, kind: how}
	}
	for _, m := range s.CustomMetrics {
		plan(decision.MetricID{Kind: decision.PodsMetric, Name: m.MetricName}, "Pods", m.Selector,
			metrics.HistoryRequest{Metric: m.MetricName, Resource: podsGR, Names: pods}, objectsHistory)
	}
	for _, m := range s.ResourceMetrics {
		plan(decision.MetricID{Kind: decision.ResourceMetric, Name: string(m.ResourceName)}, "Resource", nil,
			metrics.HistoryRequest{Metric: string(m.ResourceName), Resource: podsGR, Names: pods}, resourceHistory)
	}
	for _, m := range s.ObjectMetrics {
		gv, _ := schema.ParseGroupVersion(m.DescribedObject.APIVersion)
		gr := schema.GroupResource{Group: gv.Group, Resource: strings.ToLower(m.DescribedObject.Kind)}
		id := decision.MetricID{Kind: decision.ObjectMetric, Name: m.MetricName, DescribedObject: m.DescribedObject.Kind + "/" + m.DescribedObject.Name}
		plan(id, "Object/"+m.DescribedObject.Kind+"/"+m.DescribedObject.Name, m.Selector,
			metrics.HistoryRequest{Metric: m.MetricName, Resource: gr, Names: regexp.QuoteMeta(m.DescribedObject.Name)}, objectsHistory)
	}
	for _, m := range s.ExternalMetrics {
		plan(decision.MetricID{Kind: decision.ExternalMetric, Name: m.MetricName}, "External", m.Selector,
			metrics.HistoryRequest{Metric: m.MetricName}, externalHistory)
	}
	for _, m := range s.ContainerResourceMetrics {
		plan(decision.MetricID{Kind: decision.ContainerResourceMetric, Name: string(m.ResourceName), Container: m.Container}, "ContainerResource/"+m.Container, nil,
			metrics.HistoryRequest{Metric: string(m.ResourceName), Resource: podsGR, Names: pods, Container: m.Container}, resourceHistory)
	}
	return out
}

// podNamePattern matches the names of the pods of pa's target, as their controllers name them:
// a StatefulSet's name-<ordinal>, a Deployment's name-<template hash>-<suffix>. Its pods over
// the whole history match, not only today's.
func podNamePattern(pa *podpilotv1alpha1.PodAutoscaler) string {
	name := regexp.QuoteMeta(pa.Spec.ScaleTargetName)
	if pa.Spec.ScaleTargetKind.Canonical() == podpilotv1alpha1.ScaleTargetStatefulSet {
		return name + "-[0-9]+"
	}
	return name + "-[a-z0-9]+-[a-z0-9]+"
}
