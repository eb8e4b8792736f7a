package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// ErrNoRule means no rule of the rule file serves a metric for pods in the window.
var ErrNoRule = errors.New("no rule serves this metric for pods")

// Source reads Prometheus history; client_golang's promv1.API satisfies it.
type Source interface {
	// QueryRange evaluates query at every step of r.
	QueryRange(ctx context.Context, query string, r promv1.Range, opts ...promv1.Option) (model.Value, promv1.Warnings, promv1.Infos, error)
	// Series returns the series matching any of matches between start and end.
	Series(ctx context.Context, matches []string, start, end time.Time, opts ...promv1.Option) ([]model.LabelSet, promv1.Warnings, promv1.Infos, error)
}

var _ Source = promv1.API(nil)

// Window is the history to replay.
type Window struct {
	// From and To bound the history; Step is the time between decisions.
	From, To time.Time
	// Step is the time between two replayed decisions (the sync period being modelled).
	Step time.Duration
}

// Times returns the steps of w, as Prometheus evaluates a range query: From, From+Step, ... <= To.
func (w Window) Times() []time.Time {
	var out []time.Time
	for t := w.From; !t.After(w.To); t = t.Add(w.Step) {
		out = append(out, t)
	}
	return out
}

// Reader turns a spec into its workload's Trace, through the server's rules.
type Reader struct {
	// Source is Prometheus.
	Source Source
	// Rules are the compiled rules of the server's rule file.
	Rules *rules.RuleSet
	// Namespace is the workload's namespace.
	Namespace string
	// PodName matches the workload's pods by name; nil derives it from the target's kind and name.
	PodName *regexp.Regexp
}

var podsResource = schema.GroupResource{Resource: "pods"}

// Trace reads spec's history over w: each metric's load and the workload's replicas.
func (r *Reader) Trace(ctx context.Context, spec Spec, w Window) (Trace, error) {
	tr := Trace{Times: w.Times()}
	podRe := r.PodName
	if podRe == nil {
		podRe = podNamePattern(spec.PodAutoscaler)
	}
	var firstCounts []float64
	for _, ms := range spec.Metrics {
		q, podLabel, err := r.metricQuery(ctx, ms, w)
		if err != nil {
			return Trace{}, err
		}
		m, err := r.matrix(ctx, q, w)
		if err != nil {
			return Trace{}, fmt.Errorf("read %s %s: %w", ms.Kind, ms.Name, err)
		}
		load, counts := sumPods(m, podLabel, podRe, tr.Times)
		tr.Loads = append(tr.Loads, load)
		if firstCounts == nil {
			firstCounts = counts
		}
	}
	actual, err := r.actualReplicas(ctx, spec, w)
	if err != nil {
		return Trace{}, err
	}
	if actual == nil {
		klog.FromContext(ctx).Info("No kube-state-metrics replicas series; counting the pods with samples as the actual replicas",
			"spec", spec.Name, "target", spec.PodAutoscaler.Spec.ScaleTargetName)
		actual = firstCounts
	}
	tr.Actual = actual
	return tr, nil
}

// metricQuery renders the query of one metric, as the server would for all pods of the namespace,
// and returns it with the label holding the pod name.
func (r *Reader) metricQuery(ctx context.Context, ms MetricSpec, w Window) (string, string, error) {
	req := rules.ObjectRequest{Resource: podsResource, Namespace: r.Namespace, AllObjects: true, Selector: labels.Everything()}
	if ms.Kind == decision.ResourceMetric {
		rq, err := r.resourceQuery(ms.Name)
		if err != nil {
			return "", "", err
		}
		q, err := rq.ContainerQuery(req)
		if err != nil {
			return "", "", fmt.Errorf("render %s query: %w", ms.Name, err)
		}
		label, err := rq.LabelForResource(podsResource)
		return q, label, err
	}
	if ms.Custom != nil && ms.Custom.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(ms.Custom.Selector.LabelSelector())
		if err != nil {
			return "", "", fmt.Errorf("selector of metric %s: %w", ms.Name, err)
		}
		req.Selector = sel
	}
	rule, series, err := r.discover(ctx, ms.Name, w)
	if err != nil {
		return "", "", err
	}
	req.Series = series
	q, err := rule.Query(req)
	if err != nil {
		return "", "", fmt.Errorf("render query of metric %s: %w", ms.Name, err)
	}
	label, err := rule.LabelForResource(podsResource)
	return q, label, err
}

func (r *Reader) resourceQuery(name string) (*rules.ResourceQuery, error) {
	if r.Rules.Resource == nil {
		return nil, fmt.Errorf("resource metric %s: the rule file has no resourceRules: %w", name, ErrNoRule)
	}
	if name == "memory" {
		return r.Rules.Resource.Memory, nil
	}
	return r.Rules.Resource.CPU, nil
}

// discover finds the rule and series serving metric for pods, as the server's discovery does:
// the first rule in file order whose series in the window yield the metric.
func (r *Reader) discover(ctx context.Context, metric string, w Window) (*rules.Rule, string, error) {
	found := map[string][]model.LabelSet{}
	for _, rule := range r.Rules.Custom {
		q := rule.SeriesQuery()
		sets, seen := found[q]
		if !seen {
			var err error
			if sets, _, _, err = r.Source.Series(ctx, []string{q}, w.From, w.To); err != nil {
				return nil, "", fmt.Errorf("discover series %s: %w", q, err)
			}
			found[q] = sets
		}
		for _, ls := range sets {
			info, ok := rule.Describe(seriesOf(ls))
			if !ok || info.Metric != metric {
				continue
			}
			for _, res := range info.Resources {
				if res.GroupResource == podsResource {
					return rule, info.Series, nil
				}
			}
		}
	}
	return nil, "", fmt.Errorf("metric %s between %s and %s: %w", metric, w.From.UTC().Format(time.RFC3339), w.To.UTC().Format(time.RFC3339), ErrNoRule)
}

func seriesOf(ls model.LabelSet) rules.Series {
	s := rules.Series{Name: string(ls[model.MetricNameLabel]), Labels: map[string]string{}}
	for k, v := range ls {
		if k != model.MetricNameLabel && v != "" {
			s.Labels[string(k)] = string(v)
		}
	}
	return s
}

// matrix runs a range query over w, in chunks of at most maxPoints steps (Prometheus' limit per
// series of one query): a series appears once per chunk it has samples in.
func (r *Reader) matrix(ctx context.Context, query string, w Window) (model.Matrix, error) {
	var m model.Matrix
	for _, chunk := range w.chunks(maxPoints - 1) {
		part, err := r.matrixChunk(ctx, query, chunk)
		if err != nil {
			return nil, err
		}
		m = append(m, part...)
	}
	return m, nil
}

// matrixChunk runs one range query over w.
func (r *Reader) matrixChunk(ctx context.Context, query string, w Window) (model.Matrix, error) {
	v, warnings, _, err := r.Source.QueryRange(ctx, query, promv1.Range{Start: w.From, End: w.To, Step: w.Step})
	if err != nil {
		return nil, fmt.Errorf("query_range %s: %w", query, err)
	}
	if len(warnings) > 0 {
		klog.FromContext(ctx).V(2).Info("Prometheus warnings", "query", query, "warnings", warnings)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query_range %s returned a %s, want a matrix", query, v.Type())
	}
	return m, nil
}

// actualReplicas reads the target's spec replicas from kube-state-metrics; nil when absent.
func (r *Reader) actualReplicas(ctx context.Context, spec Spec, w Window) ([]float64, error) {
	name := spec.PodAutoscaler.Spec.ScaleTargetName
	q := fmt.Sprintf("max(kube_deployment_spec_replicas{namespace=%q,deployment=%q})", r.Namespace, name)
	if spec.PodAutoscaler.Spec.ScaleTargetKind.Canonical() == podpilotv1alpha1.ScaleTargetStatefulSet {
		q = fmt.Sprintf("max(kube_statefulset_replicas{namespace=%q,statefulset=%q})", r.Namespace, name)
	}
	m, err := r.matrix(ctx, q, w)
	if err != nil {
		return nil, fmt.Errorf("read replicas of %s: %w", name, err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	var values []model.SamplePair // the one series of max(), once per chunk
	for _, s := range m {
		values = append(values, s.Values...)
	}
	return valuesAt(values, w.Times()), nil
}

// podNamePattern matches the names of the pods of pa's target: <deployment>-<hash>-<suffix> or
// <statefulset>-<ordinal>.
func podNamePattern(pa *podpilotv1alpha1.PodAutoscaler) *regexp.Regexp {
	name := regexp.QuoteMeta(pa.Spec.ScaleTargetName)
	if pa.Spec.ScaleTargetKind.Canonical() == podpilotv1alpha1.ScaleTargetStatefulSet {
		return regexp.MustCompile("^" + name + "-[0-9]+$")
	}
	return regexp.MustCompile("^" + name + "-[a-z0-9]+-[a-z0-9]+$")
}

// sumPods sums, at each time, the samples of the series whose podLabel matches podRe, and
// counts them. A time without any sample is NaN in both.
func sumPods(m model.Matrix, podLabel string, podRe *regexp.Regexp, times []time.Time) (load, counts []float64) {
	load, counts = nanSlice(len(times)), nanSlice(len(times))
	index := make(map[int64]int, len(times))
	for i, t := range times {
		index[t.UnixMilli()] = i
	}
	for _, s := range m {
		if !podRe.MatchString(string(s.Metric[model.LabelName(podLabel)])) {
			continue
		}
		for _, p := range s.Values {
			i, ok := index[int64(p.Timestamp)]
			if !ok || math.IsNaN(float64(p.Value)) {
				continue
			}
			if math.IsNaN(load[i]) {
				load[i], counts[i] = 0, 0
			}
			load[i] += float64(p.Value)
			counts[i]++
		}
	}
	return load, counts
}

// valuesAt places sample values at their times; missing times are NaN.
func valuesAt(values []model.SamplePair, times []time.Time) []float64 {
	out := nanSlice(len(times))
	index := make(map[int64]int, len(times))
	for i, t := range times {
		index[t.UnixMilli()] = i
	}
	for _, p := range values {
		if i, ok := index[int64(p.Timestamp)]; ok {
			out[i] = float64(p.Value)
		}
	}
	return out
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}
