package metricsapi

import (
	"context"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// LastSample returns when the newest raw sample behind the custom metric info landed for the
// objects of namespace matching metricSel: the scrape time of the newest sample of the rule's
// series, from one small query that is neither shared nor cached. The zero time means no sample.
// The autoscaler uses it to evaluate right after a scrape; a raw sample's time is what tells when
// the data changed, since the metric's own query is evaluated at query time.
func (f FreshReads) LastSample(ctx context.Context, namespace string, info provider.CustomMetricInfo, metricSel labels.Selector) (time.Time, error) {
	what := fmt.Sprintf("last sample of metric %s for %s in namespace %q", info.Metric, info.GroupResource.String(), namespace)
	t, err := f.p.resolveCustom(info)
	if err != nil {
		return time.Time{}, statusError(what, err)
	}
	q, err := t.rule.LastSampleQuery(rules.ObjectRequest{
		Series:     t.series,
		Resource:   t.info.GroupResource,
		Namespace:  t.objectNamespace(namespace),
		AllObjects: true,
		Selector:   metricSel,
	})
	if err != nil {
		return time.Time{}, statusError(what, err)
	}
	client, _ := t.backend.forNamespace(t.objectNamespace(namespace))
	return f.newestSample(ctx, client, what, q)
}

// LastExternalSample is LastSample for an external metric: when the newest raw sample of the
// external rule's series, matched on namespace (if the rule is namespaced) and metricSel, landed.
func (f FreshReads) LastExternalSample(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo) (time.Time, error) {
	return f.lastExternalSample(ctx, namespace, metricSel, info, nil)
}

// lastExternalSample is LastExternalSample checked against tenancy (nil: none).
func (f FreshReads) lastExternalSample(ctx context.Context, namespace string, metricSel labels.Selector, info provider.ExternalMetricInfo, tenancy *TenancyOptions) (time.Time, error) {
	what := fmt.Sprintf("last sample of external metric %s in namespace %q", info.Metric, namespace)
	snap := f.p.snap.Load()
	entry, ok := snap.external[info.Metric]
	if !ok {
		return time.Time{}, statusError(what, snap.unknown(provider.NewMetricNotFoundError(externalResource(), info.Metric)))
	}
	if tenancy != nil && !tenancy.allows(entry, namespace) {
		return time.Time{}, tenancy.refused(info.Metric, namespace)
	}
	q, err := entry.rule.ExternalLastSampleQuery(rules.ExternalRequest{Series: entry.series, Namespace: namespace, Selector: metricSel})
	if err != nil {
		return time.Time{}, statusError(what, err)
	}
	client, _ := entry.backend.forNamespace(namespace)
	return f.newestSample(ctx, client, what, q)
}

// newestSample runs a last-sample query q on client, neither shared nor cached, and returns its
// time; the zero time means no sample.
func (f FreshReads) newestSample(ctx context.Context, client prometheus.Client, what, q string) (time.Time, error) {
	vec, err := client.Query(ctx, q, time.Time{}) // zero: Prometheus's now
	if err != nil {
		return time.Time{}, statusError(what, err)
	}
	if len(vec) == 0 {
		return time.Time{}, nil
	}
	secs := float64(vec[0].Value)
	if math.IsNaN(secs) || math.IsInf(secs, 0) || secs <= 0 {
		return time.Time{}, nil
	}
	whole, frac := math.Modf(secs)
	return time.Unix(int64(whole), int64(math.Round(frac*1e9))).UTC(), nil
}
