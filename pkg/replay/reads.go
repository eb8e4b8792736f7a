package replay

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/autoscaler/specconv"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// ErrUnknownKind means replay cannot map an Object metric's described kind to its resource:
// replay maps kinds offline, with the built-in resources of rules.StaticMapper.
var ErrUnknownKind = errors.New("kind unknown to replay's offline resource mapping")

var namespacesResource = schema.GroupResource{Resource: "namespaces"}

// metricRead is how one metric's load is read: the query the server renders for it, and which
// series of the answer are the metric's.
type metricRead struct {
	// query is the rendered PromQL, as the server would ask it at one time.
	query string
	// keep says whether a series of the answer counts: the workload's pods (and, for a
	// ContainerResource metric, the named container), the described object, or every series of
	// an External metric.
	keep func(model.Metric) bool
	// dropInf drops ±Inf samples as no data, as the server does for the series of an Object or
	// External metric; a per-pod metric keeps them, and a step whose load is infinite then fails
	// the metric (shareLoad), since replay's even spread cannot leave one pod without a sample.
	dropInf bool
}

// metricRead renders the query of ms as the server does for the workload's namespace (every pod,
// every object of the described kind, or the external metric's series), so that specs and
// metrics asking the same thing share one query (see RangeMemo).
func (r *Reader) metricRead(ctx context.Context, ms MetricSpec, podRe *regexp.Regexp, w Window) (metricRead, error) {
	switch ms.Kind {
	case decision.ResourceMetric, decision.ContainerResourceMetric:
		return r.resourceRead(ms, podRe)
	case decision.ExternalMetric:
		return r.externalRead(ctx, ms, w)
	case decision.ObjectMetric:
		return r.objectRead(ctx, ms, w)
	}
	return r.podsRead(ctx, ms, podRe, w)
}

// podsRead reads a custom (pods) metric: the rule serving it for pods, every pod of the namespace.
func (r *Reader) podsRead(ctx context.Context, ms MetricSpec, podRe *regexp.Regexp, w Window) (metricRead, error) {
	sel, err := specconv.MetricSelector(ms.Selector)
	if err != nil {
		return metricRead{}, fmt.Errorf("metric %s: %w", ms.Name, err)
	}
	rule, series, err := r.discover(ctx, r.Rules.Custom, ms.Name, &podsResource, w)
	if err != nil {
		return metricRead{}, err
	}
	q, err := rule.Query(rules.ObjectRequest{Series: series, Resource: podsResource, Namespace: r.Namespace, AllObjects: true, Selector: sel})
	if err != nil {
		return metricRead{}, fmt.Errorf("render query of metric %s: %w", ms.Name, err)
	}
	label, err := rule.LabelForResource(podsResource)
	if err != nil {
		return metricRead{}, fmt.Errorf("metric %s: %w", ms.Name, err)
	}
	return metricRead{query: q, keep: labelMatches(label, podRe)}, nil
}

// resourceRead reads a Resource or ContainerResource metric through the resource rule's
// container query, which answers one series per pod and container: a Resource metric sums the
// pod's containers, a ContainerResource metric keeps the named one.
func (r *Reader) resourceRead(ms MetricSpec, podRe *regexp.Regexp) (metricRead, error) {
	rq, err := r.resourceQuery(ms.Name)
	if err != nil {
		return metricRead{}, err
	}
	q, err := rq.ContainerQuery(rules.ObjectRequest{Resource: podsResource, Namespace: r.Namespace, AllObjects: true, Selector: labels.Everything()})
	if err != nil {
		return metricRead{}, fmt.Errorf("render %s query: %w", ms.Name, err)
	}
	label, err := rq.LabelForResource(podsResource)
	if err != nil {
		return metricRead{}, fmt.Errorf("resource %s: %w", ms.Name, err)
	}
	keep := labelMatches(label, podRe)
	if c := ms.Target.Container; ms.Kind == decision.ContainerResourceMetric {
		cl := model.LabelName(rq.ContainerLabel())
		keep = func(m model.Metric) bool { return labelMatches(label, podRe)(m) && string(m[cl]) == c }
	}
	return metricRead{query: q, keep: keep}, nil
}

// externalRead reads an External metric as the server serves it: the first external rule (in
// file order) whose series yield the metric, on the namespace (when the rule is namespaced) and
// the metric's selector; every series of the answer counts, summed as the controller sums them.
func (r *Reader) externalRead(ctx context.Context, ms MetricSpec, w Window) (metricRead, error) {
	sel, err := specconv.MetricSelector(ms.Selector)
	if err != nil {
		return metricRead{}, fmt.Errorf("external metric %s: %w", ms.Name, err)
	}
	rule, series, err := r.discover(ctx, r.Rules.External, ms.Name, nil, w)
	if err != nil {
		return metricRead{}, err
	}
	q, err := rule.ExternalQuery(rules.ExternalRequest{Series: series, Namespace: r.Namespace, Selector: sel})
	if err != nil {
		return metricRead{}, fmt.Errorf("render query of external metric %s: %w", ms.Name, err)
	}
	return metricRead{query: q, keep: func(model.Metric) bool { return true }, dropInf: true}, nil
}

// objectRead reads an Object metric as the controller asks for it (metrics.Fetcher.ObjectMetric):
// the metric of every object of the described kind in the namespace, one query whatever the
// number of objects, of which the described object's series counts. A Namespace is the
// root-scoped object named after the namespace. A rule that may not ask for every object at once
// is asked for the described object by name, as the server does.
func (r *Reader) objectRead(ctx context.Context, ms MetricSpec, w Window) (metricRead, error) {
	what := fmt.Sprintf("metric %s of %s %s", ms.Name, ms.Described.Kind, ms.Described.Name)
	sel, err := specconv.MetricSelector(ms.Selector)
	if err != nil {
		return metricRead{}, fmt.Errorf("%s: %w", what, err)
	}
	gr, err := describedResource(ms.Described)
	if err != nil {
		return metricRead{}, fmt.Errorf("%s: %w", what, err)
	}
	rule, series, err := r.discover(ctx, r.Rules.Custom, ms.Name, &gr, w)
	if err != nil {
		return metricRead{}, err
	}
	req := rules.ObjectRequest{Series: series, Resource: gr, Namespace: r.Namespace, AllObjects: true, Selector: sel}
	name := ms.Described.Name
	if gr == namespacesResource {
		req.Namespace, name = "", r.Namespace
	}
	if rule.Separable(gr) != nil {
		req.AllObjects, req.Names = false, []string{name}
	}
	q, err := rule.Query(req)
	if err != nil {
		return metricRead{}, fmt.Errorf("render query of %s: %w", what, err)
	}
	label, err := rule.LabelForResource(gr)
	if err != nil {
		return metricRead{}, fmt.Errorf("%s: %w", what, err)
	}
	return metricRead{query: q, keep: func(m model.Metric) bool { return string(m[model.LabelName(label)]) == name }, dropInf: true}, nil
}

// describedResource maps a described object's kind to its resource as the server's REST mapper
// would, offline: a kind outside rules.StaticMapper is ErrUnknownKind. A root-scoped kind other
// than Namespace is refused: the controller asks for its metric within the namespace, which the
// server never serves for it, so that metric fails at every round.
func describedResource(ref podpilotv1alpha1.MetricObjectReference) (schema.GroupResource, error) {
	gk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind).GroupKind()
	mapper := rules.StaticMapper()
	gvr, err := mapper.ResourceFor(schema.GroupVersionResource{Group: gk.Group, Resource: strings.ToLower(gk.Kind)})
	if err != nil {
		return schema.GroupResource{}, fmt.Errorf("%s: %w", gk.String(), ErrUnknownKind)
	}
	gr := gvr.GroupResource()
	mapping, err := mapper.RESTMapping(gk)
	if err != nil {
		return schema.GroupResource{}, fmt.Errorf("%s: %w", gk.String(), ErrUnknownKind)
	}
	if gr != namespacesResource && mapping.Scope.Name() == apimeta.RESTScopeNameRoot {
		return schema.GroupResource{}, fmt.Errorf("%s is cluster-scoped: the controller reads an Object metric within the namespace, where the server serves none for it: %w",
			gk.String(), ErrUnsupportedSpec)
	}
	return gr, nil
}

// labelMatches keeps the series whose label matches re.
func labelMatches(label string, re *regexp.Regexp) func(model.Metric) bool {
	return func(m model.Metric) bool { return re.MatchString(string(m[model.LabelName(label)])) }
}

// discover finds the rule and series serving metric (for gr; nil for an external rule), as the
// server's discovery does: the first rule of set, in file order, whose series in the window yield
// the metric.
func (r *Reader) discover(ctx context.Context, set []*rules.Rule, metric string, gr *schema.GroupResource, w Window) (*rules.Rule, string, error) {
	for _, rule := range set {
		sets, err := r.series(ctx, rule.SeriesQuery(), w)
		if err != nil {
			return nil, "", err
		}
		for _, ls := range sets {
			info, ok := rule.Describe(seriesOf(ls))
			if ok && info.Metric == metric && serves(info, gr) {
				return rule, info.Series, nil
			}
		}
	}
	served := "external"
	if gr != nil {
		served = gr.String()
	}
	return nil, "", fmt.Errorf("metric %s for %s between %s and %s: %w", metric, served, w.From.UTC().Format(time.RFC3339), w.To.UTC().Format(time.RFC3339), ErrNoRule)
}

// serves reports whether a series described as info serves gr (any external series when gr is nil).
func serves(info rules.SeriesInfo, gr *schema.GroupResource) bool {
	if gr == nil {
		return true
	}
	for _, res := range info.Resources {
		if res.GroupResource == *gr {
			return true
		}
	}
	return false
}
