package metricsapi

import (
	"context"
	"fmt"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

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
	vec, err := f.p.prom.Query(ctx, q, time.Time{}) // zero: Prometheus's now
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
