package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// customTarget is a custom-metric request resolved against the snapshot and the mapper.
type customTarget struct {
	served
	info provider.CustomMetricInfo // normalized group-resource
	gvr  schema.GroupVersionResource
	gvk  schema.GroupVersionKind
}

// resolveCustom finds the rule serving info; an unknown metric or resource is a 404.
func (p *Provider) resolveCustom(info provider.CustomMetricInfo) (customTarget, error) {
	notFound := provider.NewMetricNotFoundError(info.GroupResource, info.Metric)
	gvr, err := p.mapper.ResourceFor(info.GroupResource.WithVersion(""))
	if err != nil {
		return customTarget{}, notFound
	}
	info.GroupResource = gvr.GroupResource()
	snap := p.snap.Load()
	entry, ok := snap.custom[info]
	if !ok {
		return customTarget{}, snap.unknown(notFound) // a 503 while discovery is incomplete
	}
	gvk, err := p.mapper.KindFor(gvr)
	if err != nil {
		return customTarget{}, fmt.Errorf("kind for %s: %w", gvr.String(), err)
	}
	return customTarget{served: entry, info: info, gvr: gvr, gvk: gvk}, nil
}

// objectNamespace is the namespace the request's objects live in: empty for root-scoped
// resources, including namespaces themselves (namespaces/<ns>/metrics/<name> arrives as the
// namespace object <ns>).
func (t customTarget) objectNamespace(namespace string) string {
	if !t.info.Namespaced {
		return ""
	}
	return namespace
}

// objectRequests returns the request for the objects of names (sorted) that this provider sends
// (shared) and the one it would send without sharing (exact), from base (series, resource,
// namespace and metric selector). everything is set when names are every object of the
// resource in the namespace (pods/* without a label selector).
//   - A rule that is not separable for the resource (rules.Rule.Separable) is always asked by
//     name, as prometheus-adapter does, in queries within --metrics-max-query-bytes (split by
//     name when one would be longer; see queryRequest).
//   - A separable rule asks for every object (`label!=""`) when answers are shared, so that
//     every request for the namespace and metric shares one query, whatever it selects.
//   - Without sharing it asks by name while the names' matcher fits rules.MaxNamesMatcherBytes,
//     and for every object past that or for everything: one bounded query, trading a larger
//     result for a very large selection.
//
// Either way the answer is filtered by name in memory.
func (p *Provider) objectRequests(ctx context.Context, t customTarget, base rules.ObjectRequest, names []string, everything bool) (shared, exact rules.ObjectRequest) {
	byName, all := base, base
	byName.Names, all.AllObjects = names, true
	if err := t.rule.Separable(t.info.GroupResource); err != nil {
		klog.FromContext(ctx).V(4).Info("Asking for the objects by name: the rule is not separable", "metric", t.info.Metric,
			"resource", t.info.GroupResource.String(), "reason", err.Error())
		return byName, byName
	}
	exact = byName
	if everything || rules.NamesMatcherBytes(names) > rules.MaxNamesMatcherBytes {
		exact = all
	}
	if p.customQueries.enabled() {
		return all, exact
	}
	return exact, exact
}

// queryObjects sends (or shares) the shared request and returns the values of the objects of
// names (sorted) that have samples. If Prometheus rejects a shared query for every object (a
// sample limit, or another object's series failing a match), the exact request is sent instead,
// so that sharing never changes an answer.
func (p *Provider) queryObjects(ctx context.Context, t customTarget, shared, exact rules.ObjectRequest, names []string, reuse bool) ([]custom_metrics.MetricValue, error) {
	values, err := p.queryRequest(ctx, t, shared, names, reuse)
	if err != nil && shared.AllObjects && !exact.AllObjects && errors.Is(err, prometheus.ErrBadQuery) {
		klog.FromContext(ctx).V(2).Info("Shared query rejected; asking for the objects by name", "metric", t.info.Metric,
			"resource", t.info.GroupResource.String(), "namespace", shared.Namespace, "err", err)
		return p.queryRequest(ctx, t, exact, names, reuse)
	}
	return values, err
}

// queryRequest renders and runs (or shares) the rule's query for req and returns the values of
// the objects of names (sorted) that have samples. A query longer than --metrics-max-query-bytes
// is split into queries for fewer objects (rules.Rule.QueryChunks), each run (or shared) on its
// own and their samples merged; one failing fails the answer.
func (p *Provider) queryRequest(ctx context.Context, t customTarget, req rules.ObjectRequest, names []string, reuse bool) ([]custom_metrics.MetricValue, error) {
	queries, err := t.rule.QueryChunks(req)
	if err != nil {
		return nil, err
	}
	label, err := t.rule.LabelForResource(t.info.GroupResource)
	if err != nil {
		return nil, err
	}
	client, tenant := t.backend.forNamespace(req.Namespace) // a tenant per namespace never answers another's
	answers, err := prometheus.EachQuery(ctx, queries, func(ctx context.Context, q string) (objectSamples, error) {
		return p.customQueries.get(ctx, t.backend.name, t.backend.shareKey(tenant, q)+"\x00"+label, reuse, func(ctx context.Context) (objectSamples, error) {
			s, err := client.QueryLabels(ctx, q, time.Time{}, []string{label}) // zero: Prometheus's now
			return newObjectSamples(s), err
		})
	})
	if err != nil {
		return nil, err
	}
	samples := mergeObjectSamples(answers)
	q := queries[0]
	ov := objectValues{
		ref: custom_metrics.ObjectReference{
			Kind:       t.gvk.Kind,
			APIVersion: t.gvk.GroupVersion().String(),
			Namespace:  req.Namespace,
		},
		metric: custom_metrics.MetricIdentifier{Name: t.info.Metric, Selector: metricSelector(req.Selector)},
	}
	values := ov.values(samples, names)
	klog.FromContext(ctx).V(5).Info("Queried custom metric", "metric", t.info.Metric, "resource", t.info.GroupResource.String(),
		"namespace", req.Namespace, "query", q, "queries", len(queries), "samples", len(samples), "values", len(values))
	return values, nil
}

// GetMetricByName implements provider.CustomMetricsProvider with one query: for the object, or,
// while answers are shared and the rule is separable, the shared query for every object of its
// resource in its namespace (see objectRequests). An object the resource's informer does not
// hold (deleted, or never created) is a 404 without a query.
func (p *Provider) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSel labels.Selector) (*custom_metrics.MetricValue, error) {
	what := fmt.Sprintf("metric %s for %s %s", info.Metric, info.GroupResource.String(), klog.KRef(name.Namespace, name.Name).String())
	t, err := p.resolveCustom(info)
	if err != nil {
		return nil, statusError(what, err)
	}
	base := rules.ObjectRequest{
		Series:    t.series,
		Resource:  t.info.GroupResource,
		Namespace: t.objectNamespace(name.Namespace),
		Selector:  metricSel,
	}
	// The object must be one the resource's informer holds, as for GetMetricBySelector: a
	// deleted object's series are not served while they are still in Prometheus.
	exists, err := p.objects.exists(ctx, t.gvr, base.Namespace, name.Name)
	if err != nil {
		return nil, statusError(what, err)
	}
	if !exists {
		return nil, provider.NewMetricNotFoundForError(t.info.GroupResource, info.Metric, name.Name)
	}
	names := []string{name.Name}
	shared, exact := p.objectRequests(ctx, t, base, names, false)
	values, err := p.queryObjects(ctx, t, shared, exact, names, true)
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(values) == 0 {
		return nil, provider.NewMetricNotFoundForError(t.info.GroupResource, info.Metric, name.Name)
	}
	klog.FromContext(ctx).V(4).Info("Served custom metric", "metric", info.Metric, "resource", t.info.GroupResource.String(),
		"object", klog.KRef(base.Namespace, name.Name))
	return &values[0], nil
}

// GetMetricBySelector implements provider.CustomMetricsProvider with one query per request. The
// matching objects come from the resource's informer (never a LIST), so series of objects that
// no longer exist are not served; how they are asked of Prometheus is objectRequests'.
func (p *Provider) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSel labels.Selector) (*custom_metrics.MetricValueList, error) {
	return p.metricBySelector(ctx, namespace, selector, info, metricSel, true)
}

// FreshReads is the Provider for an in-process reader that times its own reads (the
// autoscaler): its GetMetricBySelector and GetExternalMetric share a query in flight but never
// reuse a finished answer, and their answers serve later API requests.
type FreshReads struct{ p *Provider }

// FreshReads returns p's FreshReads view.
func (p *Provider) FreshReads() FreshReads { return FreshReads{p: p} }

// GetMetricBySelector is Provider.GetMetricBySelector without reuse of finished answers.
func (f FreshReads) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSel labels.Selector) (*custom_metrics.MetricValueList, error) {
	return f.p.metricBySelector(ctx, namespace, selector, info, metricSel, false)
}

// metricBySelector serves GetMetricBySelector, reusing fresh shared answers if reuse is set.
func (p *Provider) metricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSel labels.Selector, reuse bool) (*custom_metrics.MetricValueList, error) {
	selector = selectorOrEverything(selector)
	what := fmt.Sprintf("metric %s for %s matching %q in namespace %q", info.Metric, info.GroupResource.String(), selector.String(), namespace)
	t, err := p.resolveCustom(info)
	if err != nil {
		return nil, statusError(what, err)
	}
	base := rules.ObjectRequest{
		Series:    t.series,
		Resource:  t.info.GroupResource,
		Namespace: t.objectNamespace(namespace),
		Selector:  metricSel,
	}
	names, err := p.objects.names(ctx, t.gvr, base.Namespace, selector)
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(names) == 0 {
		return nil, provider.NewMetricNotFoundForSelectorError(t.info.GroupResource, info.Metric, "*", selector)
	}
	shared, exact := p.objectRequests(ctx, t, base, names, selector.Empty())
	values, err := p.queryObjects(ctx, t, shared, exact, names, reuse)
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(values) == 0 {
		return nil, provider.NewMetricNotFoundForSelectorError(t.info.GroupResource, info.Metric, "*", selector)
	}
	klog.FromContext(ctx).V(4).Info("Served custom metric", "metric", info.Metric, "resource", t.info.GroupResource.String(),
		"namespace", base.Namespace, "selector", selector.String(), "byName", len(shared.Names) > 0, "objects", len(values))
	return &custom_metrics.MetricValueList{Items: values}, nil
}

func selectorOrEverything(sel labels.Selector) labels.Selector {
	if sel == nil {
		return labels.Everything()
	}
	return sel
}
