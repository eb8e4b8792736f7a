package metricsapi

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

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

// queryObjects renders and runs (or shares) the rule's query for req and returns the values of
// the objects of names (sorted) that have samples.
func (p *Provider) queryObjects(ctx context.Context, t customTarget, req rules.ObjectRequest, names []string, reuse bool) ([]custom_metrics.MetricValue, error) {
	q, err := t.rule.Query(req)
	if err != nil {
		return nil, err
	}
	label, err := t.rule.LabelForResource(t.info.GroupResource)
	if err != nil {
		return nil, err
	}
	samples, err := p.customQueries.get(ctx, q+"\x00"+label, reuse, func(ctx context.Context) (objectSamples, error) {
		s, err := p.prom.QueryLabels(ctx, q, time.Time{}, []string{label}) // zero: Prometheus's now
		return newObjectSamples(s), err
	})
	if err != nil {
		return nil, err
	}
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
		"namespace", req.Namespace, "query", q, "samples", len(samples), "values", len(values))
	return values, nil
}

// GetMetricByName implements provider.CustomMetricsProvider with one query for the object, or,
// while answers are shared, with the shared query for every object of its resource in its
// namespace.
func (p *Provider) GetMetricByName(ctx context.Context, name types.NamespacedName, info provider.CustomMetricInfo, metricSel labels.Selector) (*custom_metrics.MetricValue, error) {
	what := fmt.Sprintf("metric %s for %s %s", info.Metric, info.GroupResource.String(), klog.KRef(name.Namespace, name.Name).String())
	t, err := p.resolveCustom(info)
	if err != nil {
		return nil, statusError(what, err)
	}
	req := rules.ObjectRequest{
		Series:    t.series,
		Resource:  t.info.GroupResource,
		Namespace: t.objectNamespace(name.Namespace),
		Selector:  metricSel,
	}
	names := []string{name.Name}
	if p.customQueries.enabled() {
		req.AllObjects = true
	} else {
		req.Names = names
	}
	values, err := p.queryObjects(ctx, t, req, names, true)
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(values) == 0 {
		return nil, provider.NewMetricNotFoundForError(t.info.GroupResource, info.Metric, name.Name)
	}
	klog.FromContext(ctx).V(4).Info("Served custom metric", "metric", info.Metric, "resource", t.info.GroupResource.String(),
		"object", klog.KRef(req.Namespace, name.Name))
	return &values[0], nil
}

// GetMetricBySelector implements provider.CustomMetricsProvider with at most one query per request:
//   - the matching objects come from the resource's metadata informer (never a LIST), so
//     series of objects that no longer exist are not served;
//   - while answers are shared (--metrics-query-cache-max-age), the query asks for every object
//     of the resource in the namespace (AllObjects), so that every request for the namespace and
//     metric shares it, whatever its selector;
//   - otherwise an empty selector queries every object (AllObjects); when the names' matcher fits
//     rules.MaxNamesMatcherBytes they are queried by name, and when it does not the query matches
//     every object. This keeps each request to one query of bounded size, trading a larger
//     result for a very large selection.
//
// Either way the result is filtered by the selected names in memory.
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
	what := fmt.Sprintf("metric %s for %s matching %q in namespace %q", info.Metric, info.GroupResource.String(),
		selectorOrEverything(selector).String(), namespace)
	t, err := p.resolveCustom(info)
	if err != nil {
		return nil, statusError(what, err)
	}
	req := rules.ObjectRequest{
		Series:    t.series,
		Resource:  t.info.GroupResource,
		Namespace: t.objectNamespace(namespace),
		Selector:  metricSel,
	}
	names, err := p.objects.names(ctx, t.gvr, req.Namespace, selectorOrEverything(selector))
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(names) == 0 {
		return nil, provider.NewMetricNotFoundForSelectorError(t.info.GroupResource, info.Metric, "*", selectorOrEverything(selector))
	}
	// Series of objects that are gone (a pod deleted within the rate window) are dropped by the
	// name filter either way.
	if p.customQueries.enabled() || selector == nil || selector.Empty() || rules.NamesMatcherBytes(names) > rules.MaxNamesMatcherBytes {
		req.AllObjects = true
	} else {
		req.Names = names
	}
	values, err := p.queryObjects(ctx, t, req, names, reuse)
	if err != nil {
		return nil, statusError(what, err)
	}
	if len(values) == 0 {
		return nil, provider.NewMetricNotFoundForSelectorError(t.info.GroupResource, info.Metric, "*", selectorOrEverything(selector))
	}
	klog.FromContext(ctx).V(4).Info("Served custom metric", "metric", info.Metric, "resource", t.info.GroupResource.String(),
		"namespace", req.Namespace, "selector", selectorOrEverything(selector).String(), "byName", len(req.Names) > 0, "objects", len(values))
	return &custom_metrics.MetricValueList{Items: values}, nil
}

func selectorOrEverything(sel labels.Selector) labels.Selector {
	if sel == nil {
		return labels.Everything()
	}
	return sel
}
