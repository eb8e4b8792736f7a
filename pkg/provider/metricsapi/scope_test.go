package metricsapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/component-base/metrics"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// newScopeMapper is StaticMapper plus a root-scoped and a namespaced custom resource of
// example.io, which no built-in list can know.
func newScopeMapper() apimeta.RESTMapper {
	gv := schema.GroupVersion{Group: "example.io", Version: "v1"}
	extra := apimeta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	extra.Add(gv.WithKind("ClusterWidget"), apimeta.RESTScopeRoot)
	extra.Add(gv.WithKind("Widget"), apimeta.RESTScopeNamespace)
	return apimeta.MultiRESTMapper{rules.StaticMapper(), extra}
}

// TestResourceScopeComesFromTheRESTMapper checks prometheus-adapter's rule that a metric of a
// cluster-scoped resource is served without a namespace even when its series carry one
// (series_registry.go treats namespaces, nodes and persistentvolumes so); podpilot asks the
// RESTMapper instead of a list, so cluster-scoped custom resources follow the same rule.
func TestResourceScopeComesFromTheRESTMapper(t *testing.T) {
	const volumeRules = `rules:
- seriesQuery: '{namespace!="",persistentvolumeclaim!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      persistentvolumeclaim: {resource: persistentvolumeclaim}
      volume: {resource: persistentvolume}
      clusterwidget: {group: example.io, resource: clusterwidget}
      widget: {group: example.io, resource: widget}
  metricsQuery: max(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	series := map[string][]model.LabelSet{`{namespace!="",persistentvolumeclaim!=""}`: {
		labelSet("volume_used_bytes", "namespace", "ns", "persistentvolumeclaim", "c1", "volume", "pv1",
			"clusterwidget", "cw1", "widget", "w1"),
	}}
	prom := &fakeProm{series: series, query: answer(model.Vector{sample(7, testNow, "volume", "pv1")}, nil)}
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{
		Options:    Options{RulesFile: rulesFile(t, volumeRules), DiscoveryInterval: DefaultDiscoveryInterval, SeriesMaxAge: DefaultSeriesMaxAge},
		Prometheus: prom,
		Mapper:     newScopeMapper(),
		Informers: metadatainformer.NewSharedInformerFactory(fake.NewSimpleMetadataClient(scheme, &metav1.PartialObjectMetadata{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
			ObjectMeta: metav1.ObjectMeta{Name: "pv1"},
		}), 0),
		Registry: metrics.NewKubeRegistry(),
		Clock:    testingclock.NewFakeClock(testNow),
	})
	if err != nil {
		t.Fatal(err)
	}
	serve(t, p)
	want := map[string]string{
		"clusterwidgets.example.io/volume_used_bytes":          "volume_used_bytes",
		"namespaces/volume_used_bytes":                         "volume_used_bytes",
		"persistentvolumeclaims/volume_used_bytes(namespaced)": "volume_used_bytes",
		"persistentvolumes/volume_used_bytes":                  "volume_used_bytes",
		"widgets.example.io/volume_used_bytes(namespaced)":     "volume_used_bytes",
	}
	if diff := cmp.Diff(want, servedNames(p.snap.Load())); diff != "" {
		t.Errorf("served metrics (-want +got):\n%s", diff)
	}

	// GET /apis/custom.metrics.k8s.io/v1beta2/persistentvolumes/pv1/volume_used_bytes
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "persistentvolumes"}, Metric: "volume_used_bytes"}
	got, err := p.GetMetricByName(t.Context(), types.NamespacedName{Name: "pv1"}, info, labels.Everything())
	checkStatus(t, err, http.StatusOK)
	if got.DescribedObject.Kind != "PersistentVolume" || got.DescribedObject.Name != "pv1" || got.DescribedObject.Namespace != "" {
		t.Errorf("described object = %+v, want the root-scoped PersistentVolume pv1", got.DescribedObject)
	}
	if len(prom.queries) != 1 || !strings.Contains(prom.queries[0], `volume="pv1"`) || strings.Contains(prom.queries[0], "namespace=") {
		t.Errorf("queries = %q, want one by volume name without a namespace matcher", prom.queries)
	}
}
