package resourcemetrics

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/podcache"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// testNow is the fake clock's time; sample timestamps are relative to it.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testRules are prometheus-adapter style resource rules with a 3m window.
const testRules = `
resourceRules:
  cpu:
    containerQuery: sum by (<<.GroupBy>>) (rate(container_cpu_usage_seconds_total{container!="",<<.LabelMatchers>>}[3m]))
    nodeQuery: sum by (<<.GroupBy>>) (rate(node_cpu_seconds_total{mode!="idle",<<.LabelMatchers>>}[3m]))
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  memory:
    containerQuery: sum by (<<.GroupBy>>) (container_memory_working_set_bytes{container!="",<<.LabelMatchers>>})
    nodeQuery: sum by (<<.GroupBy>>) (node_memory_working_set_bytes{<<.LabelMatchers>>})
    resources:
      overrides:
        node: {resource: node}
        namespace: {resource: namespace}
        pod: {resource: pod}
    containerLabel: container
  window: 3m
`

// The series each resource rule reads, which fakeProm answers by.
const (
	podCPU     = "container_cpu_usage_seconds_total"
	podMemory  = "container_memory_working_set_bytes"
	nodeCPU    = "node_cpu_seconds_total"
	nodeMemory = "node_memory_working_set_bytes"
)

func compileRules(t *testing.T) *rules.ResourceQueries {
	t.Helper()
	return compileRulesFrom(t, testRules)
}

// compileRulesFrom compiles the resource rules of a rule file.
func compileRulesFrom(t *testing.T, file string) *rules.ResourceQueries {
	t.Helper()
	cfg, err := rules.Load([]byte(file))
	if err != nil {
		t.Fatalf("load rules: %v", err)
	}
	set, err := rules.Compile(cfg, rules.StaticMapper(), rules.Limits{})
	if err != nil {
		t.Fatalf("compile rules: %v", err)
	}
	return set.Resource
}

// fakeProm answers each query with the vector of the series it reads; err fails every query.
// It is called from one goroutine at a time.
type fakeProm struct {
	vectors map[string]model.Vector // by series name
	err     error
	queries []string
}

func (f *fakeProm) Query(_ context.Context, q string, _ time.Time) (model.Vector, error) {
	f.queries = append(f.queries, q)
	if f.err != nil {
		return nil, f.err
	}
	for series, vec := range f.vectors {
		if strings.Contains(q, series+"{") {
			return vec, nil
		}
	}
	return nil, nil
}

func (f *fakeProm) Series(context.Context, []string, time.Time, time.Time) ([]model.LabelSet, error) {
	return nil, errors.New("unexpected series call")
}

func (f *fakeProm) QueryLabels(context.Context, string, time.Time, []string) ([]prometheus.Sample, error) {
	return nil, errors.New("unexpected QueryLabels call")
}

func (f *fakeProm) QueryRange(context.Context, string, time.Time, time.Time, time.Duration) (model.Matrix, error) {
	return nil, errors.New("unexpected QueryRange call")
}

func sample(v float64, ts time.Time, kv ...string) *model.Sample {
	m := model.Metric{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[model.LabelName(kv[i])] = model.LabelValue(kv[i+1])
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(v), Timestamp: model.TimeFromUnixNano(ts.UnixNano())}
}

// object is a metadata-only object as a metadata informer stores it.
func object(ns, name string, lbls map[string]string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls}}
}

// lister is a lister of objs as the shared caches hold them: nodes as metadata, pods as
// *podcache.Pod in phase Running unless phases names another phase for the pod's name.
func lister(t *testing.T, resource string, phases map[string]corev1.PodPhase, objs ...*metav1.PartialObjectMetadata) cache.GenericLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range objs {
		var obj any = o
		if resource == "pods" {
			phase, ok := phases[o.Name]
			if !ok {
				phase = corev1.PodRunning
			}
			obj = &podcache.Pod{Name: o.Name, Namespace: o.Namespace, Labels: o.Labels, Phase: phase}
		}
		if err := indexer.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	return cache.NewGenericLister(indexer, schema.GroupResource{Resource: resource})
}

// fixture is what a test provider is built on.
type fixture struct {
	prom  *fakeProm
	rules *rules.ResourceQueries // nil: no resource rules in force
	pods  []*metav1.PartialObjectMetadata
	nodes []*metav1.PartialObjectMetadata
	// phases are the pods' phases by name; Running when absent.
	phases map[string]corev1.PodPhase
}

func (f fixture) provider(t *testing.T) *Provider {
	t.Helper()
	p, err := New(Config{
		Prometheus: f.prom,
		Rules:      func() *rules.ResourceQueries { return f.rules },
		Pods:       lister(t, "pods", f.phases, f.pods...),
		Nodes:      lister(t, "nodes", nil, f.nodes...),
		Clock:      testingclock.NewFakePassiveClock(testNow),
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// checkStatus checks err's HTTP code and that its message contains every fragment.
func checkStatus(t *testing.T, err error, code int, fragments ...string) {
	t.Helper()
	got := http.StatusOK
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		got = int(status.Status().Code)
	} else if err != nil {
		got = 0
	}
	if got != code {
		t.Fatalf("status code = %d (err %v), want %d", got, err, code)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err.Error(), f)
		}
	}
}
