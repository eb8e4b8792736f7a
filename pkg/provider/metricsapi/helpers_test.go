package metricsapi

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// testNow is the fake clock's time; sample timestamps are relative to it.
var testNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeProm is a prometheus.Client answering series from a map and queries from a function.
// Series may be called concurrently (it only reads); Query is called from the test goroutine.
type fakeProm struct {
	series      map[string][]model.LabelSet // by series query
	seriesErr   map[string]error            // by series query
	seriesCalls atomic.Int32
	query       func(q string) (model.Vector, error)
	queries     []string
	// rangeQuery answers QueryRange; nil fails it.
	rangeQuery func(q string, start, end time.Time, step time.Duration) (model.Matrix, error)
}

func (f *fakeProm) Series(_ context.Context, matchers []string, start, end time.Time) ([]model.LabelSet, error) {
	f.seriesCalls.Add(1)
	if len(matchers) != 1 || !end.Equal(testNow) || !start.Equal(testNow.Add(-DefaultSeriesMaxAge)) {
		return nil, errors.New("unexpected series call")
	}
	if err := f.seriesErr[matchers[0]]; err != nil {
		return nil, err
	}
	return f.series[matchers[0]], nil
}

func (f *fakeProm) Query(_ context.Context, q string, _ time.Time) (model.Vector, error) {
	f.queries = append(f.queries, q)
	if f.query == nil {
		return nil, nil
	}
	return f.query(q)
}

func (f *fakeProm) QueryRange(_ context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	f.queries = append(f.queries, q)
	if f.rangeQuery == nil {
		return nil, errors.New("unexpected range query")
	}
	return f.rangeQuery(q, start, end, step)
}

func (f *fakeProm) QueryLabels(ctx context.Context, q string, at time.Time, labels []string) ([]prometheus.Sample, error) {
	vec, err := f.Query(ctx, q, at)
	return project(vec, labels), err
}

// project reduces a vector to the given labels, as prometheus.Client.QueryLabels does.
func project(vec model.Vector, labels []string) []prometheus.Sample {
	out := make([]prometheus.Sample, 0, len(vec))
	for _, s := range vec {
		vals := make([]string, len(labels))
		for i, l := range labels {
			vals[i] = string(s.Metric[model.LabelName(l)])
		}
		out = append(out, prometheus.Sample{Labels: vals, Value: float64(s.Value), Timestamp: s.Timestamp})
	}
	return out
}

// Series queries of the default rules.
const (
	podsQuery = `{namespace!="",pod!=""}`
	nsQuery   = `{namespace!=""}`
)

func labelSet(name string, kv ...string) model.LabelSet {
	ls := model.LabelSet{model.MetricNameLabel: model.LabelValue(name)}
	for i := 0; i+1 < len(kv); i += 2 {
		ls[model.LabelName(kv[i])] = model.LabelValue(kv[i+1])
	}
	return ls
}

func sample(v float64, ts time.Time, kv ...string) *model.Sample {
	m := model.Metric{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[model.LabelName(kv[i])] = model.LabelValue(kv[i+1])
	}
	return &model.Sample{Metric: m, Value: model.SampleValue(v), Timestamp: model.TimeFromUnixNano(ts.UnixNano())}
}

// seedSeries is the seed: the per-pod counter zdns_vanguard_queries_total and a gauge
// zdns_vanguard_qps with the same served name.
func seedSeries() map[string][]model.LabelSet {
	perPod := []model.LabelSet{
		labelSet("zdns_vanguard_queries_total", "namespace", "ns", "pod", "p1", "job", "zdns"),
		labelSet("zdns_vanguard_queries_total", "namespace", "ns", "pod", "p2", "job", "zdns"),
		labelSet("zdns_vanguard_qps", "namespace", "ns", "pod", "p1"),
	}
	return map[string][]model.LabelSet{podsQuery: perPod, nsQuery: perPod}
}

func pod(ns, name string, lbls map[string]string) runtime.Object {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
	}
}

func node(name string, lbls map[string]string) runtime.Object {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls},
	}
}

// object is the metadata of an object of kind (a core v1 kind) named name in namespace.
func object(kind, namespace, name string) runtime.Object {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
	}
}

// deleteFromCache removes obj from its informer's cache, started and synced first, as the
// informer does on a watch's delete event.
func deleteFromCache(t *testing.T, p *Provider, obj runtime.Object) {
	t.Helper()
	gvk := obj.GetObjectKind().GroupVersionKind()
	gvr, _ := apimeta.UnsafeGuessKindToResource(gvk)
	inf, err := p.objects.synced(t.Context(), gvr)
	if err != nil {
		t.Fatal(err)
	}
	if err := inf.Informer().GetStore().Delete(obj); err != nil {
		t.Fatal(err)
	}
}

// testProvider builds a provider on fakes with one query per request (sharing has its own
// tests); rulesFile "" means the default rules.
func testProvider(t *testing.T, prom *fakeProm, rulesFile string, objs ...runtime.Object) (*Provider, metrics.KubeRegistry) {
	t.Helper()
	opts := *NewOptions()
	opts.RulesFile = rulesFile
	opts.QueryCacheMaxAge = 0
	return providerWith(t, prom, opts, objs...)
}

// providerWith builds a provider on fakes with opts.
func providerWith(t *testing.T, prom prometheus.Client, opts Options, objs ...runtime.Object) (*Provider, metrics.KubeRegistry) {
	t.Helper()
	reg := metrics.NewKubeRegistry()
	p, err := New(providerConfig(t, prom, opts, reg, objs...))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p, reg
}

// providerConfig is the Config of a provider on fakes with opts, recording its metrics on reg.
func providerConfig(t *testing.T, prom prometheus.Client, opts Options, reg metrics.KubeRegistry, objs ...runtime.Object) Config {
	t.Helper()
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return Config{
		Options:    opts,
		Prometheus: prom,
		Mapper:     rules.StaticMapper(),
		Informers:  metadatainformer.NewSharedInformerFactory(fake.NewSimpleMetadataClient(scheme, objs...), 0),
		Registry:   reg,
		Clock:      testingclock.NewFakeClock(testNow),
	}
}

// servingProvider is a provider with one query per request after one discovery pass, with
// informers running under t.Context.
func servingProvider(t *testing.T, prom *fakeProm, rulesFile string, objs ...runtime.Object) *Provider {
	t.Helper()
	p, _ := testProvider(t, prom, rulesFile, objs...)
	return serve(t, p)
}

// defaultProvider is a serving provider with the options a user runs (answers shared), and
// rulesFile ("" for the default rules).
func defaultProvider(t *testing.T, prom *fakeProm, rulesFile string, objs ...runtime.Object) *Provider {
	t.Helper()
	opts := *NewOptions()
	opts.RulesFile = rulesFile
	p, _ := providerWith(t, prom, opts, objs...)
	return serve(t, p)
}

// serve runs one discovery pass and starts p's informers under t.Context.
func serve(t *testing.T, p *Provider) *Provider {
	t.Helper()
	p.refresh(t.Context())
	p.objects.start(t.Context())
	t.Cleanup(stopInformers(p))
	return p
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func rulesFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	writeFile(t, path, content)
	return path
}

// statusCode returns 200 for nil, the HTTP code of an API status error, or 0.
func statusCode(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return int(status.Status().Code)
	}
	return 0
}

// checkStatus checks err's HTTP code and that its message contains every fragment.
func checkStatus(t *testing.T, err error, code int, fragments ...string) {
	t.Helper()
	if got := statusCode(err); got != code {
		t.Fatalf("status code = %d (err %v), want %d", got, err, code)
	}
	if code == http.StatusOK {
		return
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q does not contain %q", err.Error(), f)
		}
	}
}

func counterValue(t *testing.T, c *metrics.CounterVec, lvs ...string) float64 {
	t.Helper()
	v, err := testutil.GetCounterMetricValue(c.WithLabelValues(lvs...))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// stopInformers returns a func that waits for the test provider's informers to stop.
func stopInformers(p *Provider) func() {
	return p.objects.informers.(metadatainformer.SharedInformerFactory).Shutdown
}
