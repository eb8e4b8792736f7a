package metricsapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/component-base/metrics"
	testingclock "k8s.io/utils/clock/testing"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// benchPrometheus answers discovery with the seed's per-pod counter and every query with one
// sample per pod of the namespace "bench".
func benchPrometheus(b *testing.B, pods int) *httptest.Server {
	b.Helper()
	var q strings.Builder
	q.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
	for i := range pods {
		if i > 0 {
			q.WriteByte(',')
		}
		fmt.Fprintf(&q, `{"metric":{"pod":"pod-%05d"},"value":[1772366400.123,"%d.25"]}`, i, i)
	}
	q.WriteString(`]}}`)
	query := []byte(q.String())
	series := []byte(`{"status":"success","data":[{"__name__":"zdns_vanguard_queries_total","namespace":"bench","pod":"pod-00000"}]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/series") {
			_, _ = w.Write(series)
			return
		}
		_, _ = w.Write(query)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// benchProvider is a provider on a real Prometheus client and fake pod metadata, after one
// discovery pass, with its informers running.
func benchProvider(b *testing.B, pods int, configure func(*Config)) *Provider {
	b.Helper()
	o := prometheus.NewOptions()
	o.URL = benchPrometheus(b, pods).URL
	promCfg, err := o.Config()
	if err != nil {
		b.Fatal(err)
	}
	prom, err := prometheus.New(promCfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	scheme := fake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		b.Fatal(err)
	}
	objs := make([]runtime.Object, pods)
	for i := range objs {
		objs[i] = pod("bench", fmt.Sprintf("pod-%05d", i), map[string]string{"app": "bench"})
	}
	cfg := Config{
		Options:    *NewOptions(),
		Prometheus: prom,
		Mapper:     rules.StaticMapper(),
		Informers:  metadatainformer.NewSharedInformerFactory(fake.NewSimpleMetadataClient(scheme, objs...), 0),
		Registry:   metrics.NewKubeRegistry(),
		Clock:      testingclock.NewFakeClock(testNow),
	}
	configure(&cfg)
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	p.refresh(b.Context())
	p.objects.start(b.Context())
	b.Cleanup(stopInformers(p))
	return p
}

// BenchmarkGetMetricBySelector is one pods/* request (selector app=bench) served from a
// Prometheus answer over loopback HTTP: query, decode, filter and build the MetricValueList.
// "unshared" sends a query per request; "shared" is a request served from a fresh shared answer.
func BenchmarkGetMetricBySelector(b *testing.B) {
	info := provider.CustomMetricInfo{GroupResource: schema.GroupResource{Resource: "pods"}, Namespaced: true, Metric: "zdns_vanguard_qps"}
	sel := labels.SelectorFromSet(labels.Set{"app": "bench"})
	for _, pods := range []int{100, 10000} {
		for _, mode := range []string{"unshared", "shared"} {
			b.Run(fmt.Sprintf("%s/pods=%d", mode, pods), func(b *testing.B) {
				p := benchProvider(b, pods, func(cfg *Config) { setSharing(cfg, mode == "shared") })
				// Warm up: the first request starts the pod informer and fills the shared answer.
				if _, err := p.GetMetricBySelector(b.Context(), "bench", sel, info, labels.Everything()); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					list, err := p.GetMetricBySelector(b.Context(), "bench", sel, info, labels.Everything())
					if err != nil || len(list.Items) != pods {
						b.Fatalf("GetMetricBySelector() = %v", err)
					}
				}
			})
		}
	}
}

// setSharing turns query sharing on (for far longer than a benchmark) or off.
func setSharing(cfg *Config, on bool) {
	cfg.QueryCacheMaxAge = 0
	if on {
		cfg.QueryCacheMaxAge = 1 << 62
	}
}
