package resourcemetrics

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	generatedcore "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/core"
	generatedcustommetrics "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/custommetrics"
	generatedexternalmetrics "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/externalmetrics"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// adapterDefinitions are the definitions custom-metrics-apiserver's AdapterBase configures.
func adapterDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	out := map[string]common.OpenAPIDefinition{}
	for _, get := range []common.GetOpenAPIDefinitions{generatedcore.GetOpenAPIDefinitions,
		generatedcustommetrics.GetOpenAPIDefinitions, generatedexternalmetrics.GetOpenAPIDefinitions} {
		for k, v := range get(ref) {
			out[k] = v
		}
	}
	return out
}

// adapterServer builds a server the way custom-metrics-apiserver's AdapterBase does (its
// Scheme and Codecs, its default OpenAPI configs, its apiserver.Config), with an always-allow
// authorizer and no authentication, and returns it with the config it was built from.
func adapterServer(t *testing.T) (*genericapiserver.GenericAPIServer, *genericapiserver.Config) {
	t.Helper()
	cfg := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(adapterDefinitions, openapinamer.NewDefinitionNamer(apiserver.Scheme))
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(adapterDefinitions, openapinamer.NewDefinitionNamer(apiserver.Scheme))
	cfg.Authorization.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	cfg.LoopbackClientConfig = &rest.Config{}
	cfg.ExternalAddress = "localhost:443" // no secure serving to derive it from
	adapterCfg := &apiserver.Config{GenericConfig: &cfg.Config}
	srv, err := adapterCfg.Complete(nil).New("podpilot-test", nil, nil)
	if err != nil {
		t.Fatalf("build server: %v", err)
	}
	return srv.GenericAPIServer, &cfg.Config
}

func get(t *testing.T, h http.Handler, path, accept string) (int, string) {
	t.Helper()
	req := httptest.NewRequestWithContext(t.Context(), http.MethodGet, path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Code, string(body)
}

func TestInstallServesResourceMetricsFromAnAdapterServer(t *testing.T) {
	ts := testNow.Add(-10 * time.Second)
	prom := &fakeProm{vectors: seedPodVectors(ts)}
	for k, v := range seedNodeVectors(ts) {
		prom.vectors[k] = v
	}
	existing := []*metav1.PartialObjectMetadata{object("ns", "p1", nil), object("ns", "p2", nil)}
	nodes := []*metav1.PartialObjectMetadata{object("", "n1", nil), object("", "n2", nil)}
	p := fixture{prom: prom, rules: compileRules(t), pods: existing, nodes: nodes}.provider(t)
	server, cfg := adapterServer(t)
	if err := AddOpenAPIDefinitions(cfg); err != nil {
		t.Fatal(err)
	}
	if err := p.Install(server); err != nil {
		t.Fatalf("Install: %v", err)
	}
	server.PrepareRun() // builds the OpenAPI v2 and v3 specs; a missing definition is fatal here
	h := server.Handler

	code, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", "")
	if code != http.StatusOK {
		t.Fatalf("list pods: %d %s", code, body)
	}
	var pods v1beta1.PodMetricsList
	if err := json.Unmarshal([]byte(body), &pods); err != nil {
		t.Fatal(err)
	}
	if pods.Kind != "PodMetricsList" || pods.APIVersion != "metrics.k8s.io/v1beta1" || len(pods.Items) != 2 ||
		pods.Items[0].Name != "p1" || len(pods.Items[0].Containers) != 2 || pods.Items[0].Containers[0].Usage.Cpu().String() != "250m" ||
		!pods.Items[0].Timestamp.Time.Equal(ts) || pods.Items[0].Window.Duration != 3*time.Minute {
		t.Errorf("pod metrics list = %s", body)
	}

	cases := []struct {
		name, path, accept string
		wantCode           int
		wantBody           string
	}{
		{name: "a pod is served as PodMetrics", path: "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p2", wantCode: http.StatusOK, wantBody: `"kind":"PodMetrics"`},
		{name: "a pod without samples is a 404 status", path: "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/nope", wantCode: http.StatusNotFound, wantBody: `"reason":"NotFound"`},
		{name: "a label selector is accepted", path: "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods?labelSelector=app%3Da", wantCode: http.StatusOK, wantBody: `"items":[]`},
		{name: "nodes are served cluster-scoped", path: "/apis/metrics.k8s.io/v1beta1/nodes", wantCode: http.StatusOK, wantBody: `"name":"n2"`},
		{name: "a node is served as NodeMetrics", path: "/apis/metrics.k8s.io/v1beta1/nodes/n1", wantCode: http.StatusOK, wantBody: `"cpu":"3500m"`},
		{name: "tables serve kubectl get", path: "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods", accept: "application/json;as=Table;v=v1;g=meta.k8s.io", wantCode: http.StatusOK, wantBody: `"cells":["p1","252m","65Mi","3m0s"]`},
		{name: "discovery lists pods and nodes", path: "/apis/metrics.k8s.io/v1beta1", wantCode: http.StatusOK, wantBody: `"kind":"PodMetrics"`},
		{name: "the group prefers v1beta1", path: "/apis/metrics.k8s.io", wantCode: http.StatusOK, wantBody: `"preferredVersion":{"groupVersion":"metrics.k8s.io/v1beta1"`},
		{name: "OpenAPI v2 defines the metrics types", path: "/openapi/v2", wantCode: http.StatusOK, wantBody: `"io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics"`},
		{name: "OpenAPI v3 of the group carries the group-version-kind", path: "/openapi/v3/apis/metrics.k8s.io/v1beta1", wantCode: http.StatusOK, wantBody: `"kind":"NodeMetrics"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, h, tc.path, tc.accept)
			if code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
				t.Errorf("GET %s = %d, want %d with %s; body:\n%.2000s", tc.path, code, tc.wantCode, tc.wantBody, body)
			}
		})
	}

	t.Run("Prometheus unavailable is a 503 status with the cause", func(t *testing.T) {
		prom.err = fmt.Errorf("query: %w: connection refused", prometheus.ErrUnavailable)
		code, body := get(t, h, "/apis/metrics.k8s.io/v1beta1/namespaces/ns/pods/p1", "")
		var status metav1.Status
		if err := json.Unmarshal([]byte(body), &status); err != nil {
			t.Fatal(err)
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(status.Message, "connection refused") {
			t.Errorf("GET = %d %s, want 503 naming the cause", code, body)
		}
	})
}

func TestInstallWithoutOpenAPIDefinitionsFails(t *testing.T) {
	p := fixture{prom: &fakeProm{}, rules: compileRules(t)}.provider(t)
	server, _ := adapterServer(t)
	err := p.Install(server)
	if err == nil || !strings.Contains(err.Error(), "cannot find model definition") {
		t.Errorf("Install without AddOpenAPIDefinitions = %v, want a missing model definition error", err)
	}
}
