package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// partialWarning is what Thanos Querier says when a store does not answer and partial
// responses are on.
const partialWarning = "partial response: receive store 10.0.0.7:10901 unavailable (injected by the test proxy)"

// TestFaultPrometheusPartialAnswer (fault 9): the proxy answers every query 200 with a
// warning and values that would ask for 1 replica, as a Thanos Querier that lost a store
// answers with series missing. With --prometheus-warnings-as-errors (the default) the metrics
// APIs answer 503 naming the partial answer, the PodAutoscaler holds its 3 replicas with
// ScalingActive=False, and podpilot counts the answers; it scales again once the warnings stop.
func TestFaultPrometheusPartialAnswer(t *testing.T) {
	ctx := t.Context()
	proxy := cluster.StartPrometheusProxy(t)
	p := takeOver(ctx, t, 1, "--prometheus-url="+proxy.URL, "--prometheus-timeout=2s", shareMaxAgeArg)[0]
	ns, _ := faultTarget(ctx, t, "fault-partial")

	proxy.Set(framework.Fault{Value: "10", Warnings: []string{partialWarning}}) // were it read, 1 replica
	outlastSharedAnswers()
	var codes []string
	for _, path := range []string{podsMetricPath(ns, "zdns_vanguard_qps"), "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/zdns_vanguard_qps"} {
		a, err := directGet(ctx, p, path)
		if err != nil {
			t.Fatal(err)
		}
		if a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "prometheus answer may be partial") || !strings.Contains(a.body, "store 10.0.0.7:10901") {
			t.Errorf("GET %s with a partial answer = %d %s, want 503 naming the partial answer and its warning", path, a.code, a.body)
		}
		codes = append(codes, fmt.Sprint(a.code))
	}
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionFalse)
	before := proxy.Queries()
	cluster.HoldReplicas(ctx, t, 4*sharedSyncPeriod, "Deployment", ns, "target", 3)
	rounds := proxy.Queries() - before
	warned, failed := partialCounters(ctx, t, p)
	if warned == 0 || failed == 0 {
		t.Errorf("answers_with_warnings_total = %g, request_errors_total{outcome=partial} = %g; want both counted", warned, failed)
	}

	proxy.Set(framework.Fault{Value: "10"}) // the same low values, now complete
	lifted := time.Now()
	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, "target", 1)
	assertNoPanic(t, p)
	reportFault(t, "prometheus-partial", "pods and external metrics → %s naming the partial answer; %d queries over 4 sync periods held at 3 replicas with ScalingActive=False "+
		"while the partial values asked for 1; %g answers with warnings counted, %g calls failed as partial; scaled to 1 %s after the same values came without warnings",
		strings.Join(codes, ", "), rounds, warned, failed, time.Since(lifted).Round(time.Millisecond))
}

// partialCounters reads podpilot's counts of answers with warnings and of calls failed as
// partial from its /metrics.
func partialCounters(ctx context.Context, t *testing.T, p *framework.Podpilot) (warned, failed float64) {
	t.Helper()
	a, err := directGet(ctx, p, "/metrics")
	if err != nil || a.code != http.StatusOK {
		t.Fatalf("GET /metrics = %d, %v", a.code, err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(a.body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	s := scrape(mfs)
	warned, _ = s.value("podpilot_prometheus_client_answers_with_warnings_total", map[string]string{"operation": "query"})
	failed, _ = s.value("podpilot_prometheus_client_request_errors_total", map[string]string{"operation": "query", "outcome": "partial"})
	return warned, failed
}
