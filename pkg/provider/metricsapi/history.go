package metricsapi

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// HistoryRequest asks for a metric's past values, e.g. for the autoscaler's forecast.
type HistoryRequest struct {
	// Namespace is the namespace of the objects, or of the request for an external metric.
	Namespace string
	// Metric is the metric's name.
	Metric string
	// Resource is the group-resource of the objects (pods for a per-pod metric); unused for an
	// external metric.
	Resource schema.GroupResource
	// Names is an RE2 expression the objects' names must match in whole: their values are
	// summed. Unused for an external metric, whose series are summed.
	Names string
	// Selector narrows the metric's series; nil selects everything. Unused for a resource
	// metric.
	Selector labels.Selector
	// Container, for a resource metric, keeps only the usage of this container of each pod;
	// empty sums the pods' containers. Unused for other metrics.
	Container string
	// Start, End and Step say when the values are: at Start, Start+Step, ... up to End.
	Start, End time.Time
	Step       time.Duration
}

// historyLabel marks the objects a history sums; no rule's series carries it.
const historyLabel = "podpilot_history"

// ObjectsHistory returns, at each step of req, the sum of custom metric req.Metric over the
// objects of req.Resource in req.Namespace whose names match req.Names, through the rule that
// serves it; NaN where none has a value. The names are matched in the query's series selector,
// so Prometheus reads only the target's series, not the namespace's; the sum is made by
// Prometheus (one series comes back, whatever the number of objects), from range queries of fewer than
// prometheus.MaxRangePoints steps each.
func (f FreshReads) ObjectsHistory(ctx context.Context, req HistoryRequest) ([]float64, error) {
	info := provider.CustomMetricInfo{GroupResource: req.Resource, Namespaced: true, Metric: req.Metric}
	what := fmt.Sprintf("history of metric %s for %s matching %q in namespace %q", req.Metric, req.Resource.String(), req.Names, req.Namespace)
	t, err := f.p.resolveCustom(info)
	if err != nil {
		return nil, statusError(what, err)
	}
	q, err := t.rule.Query(rules.ObjectRequest{Series: t.series, Resource: t.info.GroupResource, Namespace: t.objectNamespace(req.Namespace),
		AllObjects: true, NamesPattern: req.Names, Selector: req.Selector})
	if err != nil {
		return nil, statusError(what, err)
	}
	label, err := t.rule.LabelForResource(t.info.GroupResource)
	if err != nil {
		return nil, statusError(what, err)
	}
	q, keep := historySum(q, historyMatch{label: label, pattern: req.Names})
	client, _ := t.backend.forNamespace(t.objectNamespace(req.Namespace))
	return f.p.history(ctx, client, what, q, req, keep)
}

// keepSeries says whether a series of a history's query is part of the history.
type keepSeries func(model.Metric) bool

// historyMatch is a label of a history's series and the RE2 expression its value must match in
// whole.
type historyMatch struct{ label, pattern string }

// historySum sums, in Prometheus, the series of q whose labels match every one of ms: each match
// marks the series it accepts with a label of its own (historyLabel, then historyLabel_1, ...),
// the sum is by those labels, and keep accepts the one sum marked by all. A few series come back,
// whatever the number of objects.
func historySum(q string, ms ...historyMatch) (string, keepSeries) {
	marks := make([]string, len(ms))
	for i, m := range ms {
		marks[i] = historyLabel
		if i > 0 {
			marks[i] = fmt.Sprintf("%s_%d", historyLabel, i)
		}
		q = fmt.Sprintf("label_replace(%s, %q, \"1\", %q, %q)", q, marks[i], m.label, m.pattern)
	}
	keep := func(m model.Metric) bool {
		for _, mark := range marks {
			if m[model.LabelName(mark)] != "1" {
				return false
			}
		}
		return true
	}
	return fmt.Sprintf("sum by (%s) (%s)", strings.Join(marks, ", "), q), keep
}

// ExternalHistory returns, at each step of req, the sum of external metric req.Metric's series in
// req.Namespace matching req.Selector, through the rule that serves it; NaN where there is none.
func (f FreshReads) ExternalHistory(ctx context.Context, req HistoryRequest) ([]float64, error) {
	return f.externalHistory(ctx, req, nil)
}

// ExternalHistory is FreshReads.ExternalHistory, refusing what the tenancy options refuse.
func (r PodAutoscalerReads) ExternalHistory(ctx context.Context, req HistoryRequest) ([]float64, error) {
	return r.externalHistory(ctx, req, r.tenancy)
}

// externalHistory is ExternalHistory checked against tenancy (nil: none).
func (f FreshReads) externalHistory(ctx context.Context, req HistoryRequest, tenancy *TenancyOptions) ([]float64, error) {
	what := fmt.Sprintf("history of external metric %s in namespace %q", req.Metric, req.Namespace)
	snap := f.p.snap.Load()
	entry, ok := snap.external[req.Metric]
	if !ok {
		return nil, statusError(what, snap.unknown(provider.NewMetricNotFoundError(externalResource(), req.Metric)))
	}
	if tenancy != nil && !tenancy.allows(entry, req.Namespace) {
		return nil, tenancy.refused(req.Metric, req.Namespace)
	}
	q, err := entry.rule.ExternalQuery(rules.ExternalRequest{Series: entry.series, Namespace: req.Namespace, Selector: req.Selector})
	if err != nil {
		return nil, statusError(what, err)
	}
	client, _ := entry.backend.forNamespace(req.Namespace)
	return f.p.history(ctx, client, what, "sum("+q+")", req, func(model.Metric) bool { return true })
}

// history runs q over req's range on client, in chunks, and places the values of the series
// keep accepts at their steps; NaN where there is none.
func (p *Provider) history(ctx context.Context, client prometheus.Client, what, q string, req HistoryRequest, keep keepSeries) ([]float64, error) {
	if req.Step <= 0 || req.End.Before(req.Start) {
		return nil, fmt.Errorf("%s: range %s to %s at %s: %w", what, req.Start, req.End, req.Step, prometheus.ErrBadQuery)
	}
	n := int(req.End.Sub(req.Start)/req.Step) + 1
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	const chunk = prometheus.MaxRangePoints - 1
	for from := 0; from < n; from += chunk {
		to := min(from+chunk, n) - 1
		m, err := client.QueryRange(ctx, q, req.Start.Add(time.Duration(from)*req.Step), req.Start.Add(time.Duration(to)*req.Step), req.Step)
		if err != nil {
			return nil, statusError(what, err)
		}
		for _, s := range m {
			if !keep(s.Metric) {
				continue
			}
			for _, v := range s.Values {
				i := int(v.Timestamp.Time().Sub(req.Start).Round(req.Step) / req.Step)
				if i >= 0 && i < n {
					out[i] = float64(v.Value)
				}
			}
		}
	}
	return out, nil
}
