package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/replicas"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// ErrNoRule means no rule of the rule file serves a metric (for pods, for the described object's
// resource, or as an external metric) in the window.
var ErrNoRule = errors.New("no rule serves this metric")

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
	// Memo shares the answers of the queries already read with the other readers of the replay;
	// nil reads every query.
	Memo *RangeMemo
}

var podsResource = schema.GroupResource{Resource: "pods"}

// Trace reads spec's history over w: each metric's load and the workload's replicas. A Value
// target on an Object or External metric reads the value as a load spread over the replicas
// that had it: its load is the value times the actual replicas (see valueLoads).
func (r *Reader) Trace(ctx context.Context, spec Spec, w Window) (Trace, error) {
	tr := Trace{Times: w.Times()}
	podRe := r.podPattern(spec)
	var firstCounts []float64
	for _, ms := range spec.Metrics {
		load, counts, err := r.load(ctx, ms, podRe, w)
		if err != nil {
			return Trace{}, err
		}
		tr.Loads = append(tr.Loads, load)
		if firstCounts == nil && ms.perPod() {
			firstCounts = counts
		}
	}
	actual, err := r.actualReplicas(ctx, spec, w)
	if err != nil {
		return Trace{}, err
	}
	if actual == nil && firstCounts != nil {
		klog.FromContext(ctx).Info("No kube-state-metrics replicas series; counting the pods with samples as the actual replicas",
			"spec", spec.Name, "target", spec.PodAutoscaler.Spec.ScaleTargetName)
		actual = firstCounts
	}
	if actual == nil {
		klog.FromContext(ctx).Info("No kube-state-metrics replicas series and no per-pod metric; the replay starts from minReplicas",
			"spec", spec.Name, "target", spec.PodAutoscaler.Spec.ScaleTargetName)
		actual = nanSlice(len(tr.Times))
	}
	tr.Actual = actual
	if err := valueLoads(spec, tr); err != nil {
		return Trace{}, err
	}
	return tr, nil
}

// podPattern is the pattern of the workload's pods' names.
func (r *Reader) podPattern(spec Spec) *regexp.Regexp {
	if r.PodName != nil {
		return r.PodName
	}
	return podNamePattern(spec.PodAutoscaler)
}

// load reads ms over w: the sum at each time of the series that are the metric's, and how many
// there were (NaN where none had a sample).
func (r *Reader) load(ctx context.Context, ms MetricSpec, podRe *regexp.Regexp, w Window) ([]float64, []float64, error) {
	mr, err := r.metricRead(ctx, ms, podRe, w)
	if err != nil {
		return nil, nil, err
	}
	m, err := r.matrix(ctx, mr.query, w)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s %s: %w", ms.Kind, ms.Name, err)
	}
	load, counts := sumSeries(m, mr, w.Times())
	return load, counts, nil
}

// valueLoads turns the value of each Object or External metric with a Value target into the load
// it describes: the controller scales such a metric's ready pods by value ÷ target, that is it
// takes the value to fall as pods are added, so replay reads it as a load spread evenly over the
// actual replicas, value × actual, which the replayed pods then share (decisionInput). A step
// whose actual replicas are unknown has no data for the metric. With no actual replicas at all
// (no kube-state-metrics series and no per-pod metric to count pods by) the metric cannot be
// modelled.
func valueLoads(spec Spec, tr Trace) error {
	for k, ms := range spec.Metrics {
		if !ms.wholeTarget() || ms.Target.Type != replicas.Value {
			continue
		}
		if !slices.ContainsFunc(tr.Actual, func(a float64) bool { return !math.IsNaN(a) }) {
			return fmt.Errorf("%s metric %s has a Value target, which replay spreads over the actual replicas, and the actual replicas are unknown "+
				"(no kube-state-metrics replicas series of %s, and no per-pod metric in the spec): %w",
				ms.Kind, ms.Name, spec.PodAutoscaler.Spec.ScaleTargetName, ErrUnsupportedSpec)
		}
		for i := range tr.Loads[k] {
			tr.Loads[k][i] *= tr.Actual[i]
		}
	}
	return nil
}

// resourceQuery is the resource rule of resource name (cpu or memory).
func (r *Reader) resourceQuery(name string) (*rules.ResourceQuery, error) {
	if r.Rules.Resource == nil {
		return nil, fmt.Errorf("resource metric %s: the rule file has no resourceRules: %w", name, ErrNoRule)
	}
	if name == "memory" {
		return r.Rules.Resource.Memory, nil
	}
	return r.Rules.Resource.CPU, nil
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

// matrixChunks runs a range query over w, in chunks of at most maxPoints steps (Prometheus' limit
// per series of one query): a series appears once per chunk it has samples in.
func (r *Reader) matrixChunks(ctx context.Context, query string, w Window) (model.Matrix, error) {
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

// sumSeries sums, at each time, the samples of the series mr keeps, and counts them. A time
// without any sample is NaN in both; a NaN sample is none, and so is a ±Inf one when mr drops them.
func sumSeries(m model.Matrix, mr metricRead, times []time.Time) (load, counts []float64) {
	load, counts = nanSlice(len(times)), nanSlice(len(times))
	index := make(map[int64]int, len(times))
	for i, t := range times {
		index[t.UnixMilli()] = i
	}
	for _, s := range m {
		if !mr.keep(s.Metric) {
			continue
		}
		for _, p := range s.Values {
			i, ok := index[int64(p.Timestamp)]
			if !ok || math.IsNaN(float64(p.Value)) || mr.dropInf && math.IsInf(float64(p.Value), 0) {
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
