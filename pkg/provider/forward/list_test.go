package forward

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/metrics/pkg/apis/external_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

var externalGR = schema.GroupResource{Group: "external.metrics.k8s.io", Resource: "metrics"}

func TestListAllExternalMetrics(t *testing.T) {
	var down atomic.Bool
	other := newOtherAdapter(t, func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(`{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"external.metrics.k8s.io/v1beta1",` +
			`"resources":[{"name":"s0-prometheus","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]},` +
			`{"name":"podpilot_qps","namespaced":true,"kind":"ExternalMetricValueList","verbs":["get"]}]}`))
	})
	local := &fakeLocal{served: map[string]*external_metrics.ExternalMetricValueList{"podpilot_qps": ownList}}
	p, _ := newTestProvider(t, local, other.srv.URL, other.caFile, authorizer.AuthorizerFunc((&recordingAuthz{decision: authorizer.DecisionAllow}).Authorize))
	own := []provider.ExternalMetricInfo{{Metric: "podpilot_qps"}}
	merged := []provider.ExternalMetricInfo{{Metric: "podpilot_qps"}, {Metric: "s0-prometheus"}}

	if diff := cmp.Diff(own, p.ListAllExternalMetrics()); diff != "" {
		t.Fatalf("before the first fetch, podpilot's list only (-want +got):\n%s", diff)
	}
	p.refreshList(t.Context())
	if diff := cmp.Diff(merged, p.ListAllExternalMetrics()); diff != "" {
		t.Fatalf("both lists, podpilot's first and each metric once (-want +got):\n%s", diff)
	}
	if got := other.requests()[0].URL.Path; got != apiPath {
		t.Fatalf("listed %s, want %s", got, apiPath)
	}
	down.Store(true)
	p.refreshList(t.Context())
	if diff := cmp.Diff(merged, p.ListAllExternalMetrics()); diff != "" {
		t.Fatalf("a failed fetch keeps the last list (-want +got):\n%s", diff)
	}
}
