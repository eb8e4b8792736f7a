package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/component-base/metrics"

	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// TestReadinessWaitsForTheObjectCachesOfEveryServedResource checks that /readyz includes the
// provider's object-cache check beside discovery and the pod cache: ready means a request for
// any resource the rule file serves answers from a synced cache (the check's behaviour is
// metricsapi's TestReadyMeansEveryServedResourceCacheSynced).
func TestReadinessWaitsForTheObjectCachesOfEveryServedResource(t *testing.T) {
	p := testProvider(t)
	checks := providerChecks(p, func() bool { return true })
	var names []string
	for _, c := range checks {
		names = append(names, c.Name())
	}
	want := []string{metricsapi.BackendHealthCheckerPrefix + rules.DefaultBackend, metricsapi.HealthCheckName, metricsapi.ObjectCachesCheckName, "pod-cache"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("readiness checks (-want +got):\n%s", diff)
	}
	// Before discovery, the object caches to wait for are not known: not ready.
	err := checks[2].Check(httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if err == nil || !strings.Contains(err.Error(), "not known yet") {
		t.Errorf("object-cache check before discovery = %v, want not ready", err)
	}
}

// testProvider is a metrics provider on a Prometheus client that is never called and a fake
// metadata client, not running.
func testProvider(t *testing.T) *metricsapi.Provider {
	t.Helper()
	promCfg, err := (&prometheus.Options{URL: "http://127.0.0.1:1", Timeout: time.Second, Method: http.MethodPost}).Config()
	if err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewKubeRegistry()
	promMetrics, err := prometheus.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	prom, err := prometheus.New(promCfg, promMetrics)
	if err != nil {
		t.Fatal(err)
	}
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	p, err := metricsapi.New(metricsapi.Config{
		Options: *metricsapi.NewOptions(), Prometheus: prom, Mapper: rules.StaticMapper(),
		Informers: metadatainformer.NewSharedInformerFactory(fake.NewSimpleMetadataClient(scheme), 0), Registry: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
