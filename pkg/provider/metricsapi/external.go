package metricsapi

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// externalResource names external metrics in 404 messages.
func externalResource() schema.GroupResource {
	return schema.GroupResource{Group: "external.metrics.k8s.io", Resource: "metrics"}
}

// GetExternalMetric implements provider.ExternalMetricsProvider with one query (shared with
// requests for the same query while answers are shared): the rule's
// query on the request's namespace (when the rule is namespaced) and metric selector. One value
// is returned per result sample; an unknown metric or a query without data (or only NaN/±Inf
// samples) is a 404, like a custom metric without data.
func (p *Provider) GetExternalMetric(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return p.externalMetric(ctx, externalRead{namespace: namespace, selector: metricSel, info: info, reuse: true})
}

// GetExternalMetric is Provider.GetExternalMetric without reuse of finished answers.
func (f FreshReads) GetExternalMetric(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	return f.p.externalMetric(ctx, externalRead{namespace: namespace, selector: metricSel, info: info})
}

// externalRead is one external-metric read: what is asked, whether a fresh shared answer may be
// reused, and the tenancy options it must pass (nil: none).
type externalRead struct {
	namespace string
	selector  labels.Selector
	info      provider.ExternalMetricInfo
	reuse     bool
	tenancy   *TenancyOptions
}

// externalMetric serves an external-metric read, checked against its tenancy options on the
// same snapshot it is served from.
func (p *Provider) externalMetric(ctx context.Context, r externalRead) (*external_metrics.ExternalMetricValueList, error) {
	namespace, metricSel, info := r.namespace, r.selector, r.info
	what := fmt.Sprintf("external metric %s in namespace %q", info.Metric, namespace)
	snap := p.snap.Load()
	entry, ok := snap.external[info.Metric]
	if !ok {
		return nil, statusError(what, snap.unknown(provider.NewMetricNotFoundError(externalResource(), info.Metric)))
	}
	if r.tenancy != nil && !r.tenancy.allows(entry, namespace) {
		return nil, r.tenancy.refused(info.Metric, namespace)
	}
	q, err := entry.rule.ExternalQuery(rules.ExternalRequest{Series: entry.series, Namespace: namespace, Selector: metricSel})
	if err != nil {
		return nil, statusError(what, err)
	}
	client, tenant := entry.backend.forNamespace(namespace)
	vec, err := p.externalQueries.get(ctx, entry.backend.name, entry.backend.shareKey(tenant, q), r.reuse, func(ctx context.Context) (model.Vector, error) {
		return client.Query(ctx, q, time.Time{}) // zero: Prometheus's now
	})
	if err != nil {
		return nil, statusError(what, err)
	}
	values := externalValues(info.Metric, vec)
	if len(values) == 0 {
		return nil, provider.NewMetricNotFoundError(externalResource(), info.Metric)
	}
	klog.FromContext(ctx).V(4).Info("Served external metric", "metric", info.Metric, "namespace", namespace,
		"selector", selectorOrEverything(metricSel).String(), "values", len(values))
	klog.FromContext(ctx).V(5).Info("External metric query", "metric", info.Metric, "query", q)
	return &external_metrics.ExternalMetricValueList{Items: values}, nil
}

// ServesExternal reports whether the current snapshot serves the external metric; when it does
// not, err is what GetExternalMetric answers for it: a 404, or a 503 while discovery is
// incomplete (the metric may yet be podpilot's).
func (p *Provider) ServesExternal(metric string) (served bool, err error) {
	snap := p.snap.Load()
	if _, ok := snap.external[metric]; ok {
		return true, nil
	}
	what := fmt.Sprintf("external metric %s", metric)
	return false, statusError(what, snap.unknown(provider.NewMetricNotFoundError(externalResource(), metric)))
}
