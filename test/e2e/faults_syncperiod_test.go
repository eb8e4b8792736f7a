//go:build faults

package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// syncPeriodAutoscalerYAML is a PodAutoscaler named name scaling Deployment name between 1 and
// 4 on the external metric jobs_backlog (Value 10), with behavior (e.g. "{syncPeriodSeconds: 10}").
func syncPeriodAutoscalerYAML(name, behavior string) []byte {
	return framework.PodAutoscalerYAML(name, "deployment", name, 1, 4, `  externalMetrics:
  - {metricName: jobs_backlog, targetType: Value, value: "10"}
  behavior: `+behavior+"\n")
}

// TestFaultSyncPeriodSecondsSetsEachPodAutoscalersRounds (KEP-6003): the Prometheus proxy counts
// the queries of each namespace over a minute, under podpilot's 2 s sync period. A PodAutoscaler
// with syncPeriodSeconds 10 is read about every 10 s, one without it every 2 s; and two
// PodAutoscalers reading the same query, one at syncPeriodSeconds 1 and one at 2 s, cost one
// query a second, the pace of the faster, not the sum of both.
func TestFaultSyncPeriodSecondsSetsEachPodAutoscalersRounds(t *testing.T) {
	ctx := t.Context()
	proxy := cluster.StartPrometheusProxy(t)
	takeOver(ctx, t, 1, "--prometheus-url="+proxy.URL, shareMaxAgeArg)
	exp := serveExporter(t)
	namespaces := map[string]string{}
	for _, c := range []struct{ ns, behavior string }{
		{"sync-slow", "{syncPeriodSeconds: 10}"}, {"sync-default", "{}"}, {"sync-shared", "{syncPeriodSeconds: 1}"},
	} {
		ns := cluster.CreateNamespace(ctx, t, c.ns)
		namespaces[c.ns] = ns
		exp.SetGauge("jobs_backlog", map[string]string{"namespace": ns}, 5) // 5/10 of 1 pod: 1
		startWorkload(ctx, t, ns, "a", 1)
		applyPodAutoscaler(ctx, t, ns, syncPeriodAutoscalerYAML("a", c.behavior))
		waitPodAutoscalerCondition(ctx, t, ns, "a", "ScalingActive", metav1.ConditionTrue)
	}
	shared := namespaces["sync-shared"]
	startWorkload(ctx, t, shared, "b", 1) // the same query as a's, at the controller's 2 s
	applyPodAutoscaler(ctx, t, shared, syncPeriodAutoscalerYAML("b", "{}"))
	waitPodAutoscalerCondition(ctx, t, shared, "b", "ScalingActive", metav1.ConditionTrue)

	const window = time.Minute
	start := time.Now()
	cluster.HoldReplicas(ctx, t, window, "Deployment", shared, "a", 1)
	count := func(ns string) (int, time.Duration) {
		return roundGaps(proxy.QueryTimes(`namespace="`+ns+`"`), start, start.Add(window))
	}
	slow, slowGap := count(namespaces["sync-slow"])
	def, _ := count(namespaces["sync-default"])
	both, _ := count(shared)
	// Besides the rounds' reads, the scrape tracker checks each metric's landing now and then.
	if slow > 60/10+4 || slowGap < 5*time.Second {
		t.Errorf("syncPeriodSeconds 10: %d queries in %s, longest gap %s; want about one per 10 s", slow, window, slowGap)
	}
	if def < 60/2*2/3 {
		t.Errorf("the controller's 2 s: %d queries in %s, want about one per 2 s", def, window)
	}
	if both < 60*2/3 || both > 60*4/3+4 {
		t.Errorf("two PodAutoscalers on one query at 1 s and 2 s: %d queries in %s, want about one per second (not %d, the sum of both)", both, window, 60+30)
	}
	reportFault(t, "sync-period-seconds", "queries in %s: syncPeriodSeconds 10 → %d (longest gap %s), the controller's 2 s → %d, one query read at 1 s and 2 s → %d",
		window, slow, slowGap.Round(100*time.Millisecond), def, both)
}
