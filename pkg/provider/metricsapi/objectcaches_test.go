package metricsapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// TestReadyMeansEveryServedResourceCacheSynced checks that the object caches of every resource
// the discovered metrics are served for (here pods, namespaces and services) start at discovery,
// before any request, and that readiness waits for them: a resource whose cache cannot list
// keeps podpilot not ready, naming it, instead of the first request for it waiting or
// answering 503 after ready.
func TestReadyMeansEveryServedResourceCacheSynced(t *testing.T) {
	const serviceRules = `rules:
- seriesQuery: '{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
- seriesQuery: '{namespace!="",service!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      service: {resource: service}
  metricsQuery: sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
`
	prom := &fakeProm{
		series: map[string][]model.LabelSet{
			`{namespace!="",pod!=""}`:     {labelSet("zdns_vanguard_qps", "namespace", "ns", "pod", "p1")},
			`{namespace!="",service!=""}`: {labelSet("http_requests", "namespace", "ns", "service", "web")},
		},
		query: answer(model.Vector{sample(2, testNow, "service", "web")}, nil),
	}
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleMetadataClient(scheme, pod("ns", "p1", nil), object("Namespace", "", "ns"), object("Service", "ns", "web"))
	// Until allowed, listing services is forbidden (RBAC without the rule file's resources).
	var allowed atomic.Bool
	var serviceLists atomic.Int32
	client.PrependReactor("list", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
		serviceLists.Add(1)
		if allowed.Load() {
			return false, nil, nil
		}
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", errors.New("RBAC: list denied"))
	})
	p, err := New(Config{
		Options:    Options{RulesFile: rulesFile(t, serviceRules), DiscoveryInterval: DefaultDiscoveryInterval, SeriesMaxAge: DefaultSeriesMaxAge},
		Prometheus: prom,
		Mapper:     rules.StaticMapper(),
		Informers:  metadatainformer.NewSharedInformerFactory(client, 0),
		Registry:   metrics.NewKubeRegistry(),
		Clock:      testingclock.NewFakeClock(testNow),
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func() error {
		return p.ObjectCachesHealthChecker().Check(httptest.NewRequest(http.MethodGet, "/readyz", nil))
	}
	if err := check(); err == nil || !strings.Contains(err.Error(), "not known yet") {
		t.Errorf("readiness before discovery = %v, want not ready: the resources are not known", err)
	}

	serve(t, p) // one discovery pass and the Run context; no request is made
	if err := check(); err == nil || !strings.Contains(err.Error(), "services") {
		t.Errorf("readiness while services cannot be listed = %v, want not ready naming services", err)
	}
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, wait.ForeverTestTimeout, true,
		func(ctx context.Context) (bool, error) { return serviceLists.Load() > 0, nil }); err != nil {
		t.Fatal("the services cache was not started by discovery: no list before any request")
	}
	if err := check(); err == nil || !strings.Contains(err.Error(), "services") {
		t.Errorf("readiness after a forbidden list = %v, want not ready naming services", err)
	}

	allowed.Store(true)
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, wait.ForeverTestTimeout, true,
		func(ctx context.Context) (bool, error) { return check() == nil, nil }); err != nil {
		t.Fatalf("readiness once services can be listed = %v, want ready", check())
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "pods"}, {Version: "v1", Resource: "namespaces"}, {Version: "v1", Resource: "services"},
	} {
		if !p.objects.informers.ForResource(gvr).Informer().HasSynced() {
			t.Errorf("ready with the %s cache not synced", gvr.Resource)
		}
	}
	// Ready means the first request for a service answers from the synced cache.
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "services"}, Namespaced: true, Metric: "http_requests"}
	if _, err := p.GetMetricByName(t.Context(), types.NamespacedName{Namespace: "ns", Name: "web"}, info, nil); err != nil {
		t.Errorf("first service request once ready: %v", err)
	}
}
