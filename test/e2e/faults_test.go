package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// faultTarget is a Deployment of 3 pods under a PodAutoscaler that scales
// down at the first round reading a low value (target 2000 per pod, load 6000:
// steady at 3).
func faultTarget(ctx context.Context, t *testing.T, prefix string) (ns string, load *framework.Load) {
	t.Helper()
	ns = cluster.CreateNamespace(ctx, t, prefix)
	startWorkload(ctx, t, ns, "target", 3)
	load = cluster.NewLoad(ctx, serveExporter(t), ns, "target", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(6000)
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 5, "zdns_vanguard_qps", "2000", noScaleDownPolicy))
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionTrue)
	cluster.HoldReplicas(ctx, t, 2*sharedSyncPeriod, "Deployment", ns, "target", 3)
	return ns, load
}

// TestFaultPrometheusSlow (fault 1): a proxy delays every Prometheus answer
// past --prometheus-timeout. The API answers 503/504 within timeout + 1 s and
// never a value; the PodAutoscaler holds its replicas with ScalingActive=False
// although the load it cannot read asks for 1; when the delay is lifted it
// scales within one sync period.
func TestFaultPrometheusSlow(t *testing.T) {
	ctx := t.Context()
	const timeout = 2 * time.Second
	proxy := cluster.StartPrometheusProxy(t)
	p := takeOver(ctx, t, 1, "--prometheus-url="+proxy.URL, "--prometheus-timeout="+timeout.String(), shareMaxAgeArg)[0]
	ns, load := faultTarget(ctx, t, "fault-slow")

	proxy.Set(framework.Fault{Delay: 3 * timeout})
	outlastSharedAnswers()
	load.Set(10) // were it read, 1 replica
	var worst time.Duration
	for i := range 5 {
		a, err := directGet(ctx, p, podsMetricPath(ns, "zdns_vanguard_qps"))
		if err != nil {
			t.Fatal(err)
		}
		if a.code != http.StatusServiceUnavailable && a.code != http.StatusGatewayTimeout {
			t.Fatalf("answer %d under a slow Prometheus: %d %s, want 503 or 504", i, a.code, a.body)
		}
		worst = max(worst, a.latency)
	}
	checkTiming(t, worst <= timeout+time.Second, "slowest answer %s, promised within timeout %s + 1s", worst, timeout)
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionFalse)
	before := proxy.Queries()
	cluster.HoldReplicas(ctx, t, 6*sharedSyncPeriod, "Deployment", ns, "target", 3)
	rounds := proxy.Queries() - before

	proxy.Set(framework.Fault{})
	lifted := time.Now()
	cluster.WaitReplicas(ctx, t, time.Minute, "Deployment", ns, "target", 1)
	recovery := time.Since(lifted)
	checkTiming(t, recovery <= sharedSyncPeriod+time.Second, "scaled %s after the delay was lifted, promised within one sync period (%s)", recovery, sharedSyncPeriod)
	assertNoPanic(t, p)
	reportFault(t, "prometheus-slow", "answers 503/504 in at most %s (timeout %s); %d rounds held at 3 replicas with ScalingActive=False; scaled %s after the delay was lifted (sync period %s)",
		worst.Round(time.Millisecond), timeout, rounds, recovery.Round(time.Millisecond), sharedSyncPeriod)
}

// shareMaxAge bounds how long podpilot may answer a request from the last
// answer Prometheus gave to the same query (--metrics-query-cache-max-age,
// docs/metrics-api.md "What a request does"): the fault tests set it short, and their
// promises about the API hold from that long after the fault on.
const shareMaxAge = time.Second

var shareMaxAgeArg = "--metrics-query-cache-max-age=" + shareMaxAge.String()

// outlastSharedAnswers waits until no answer shared from before a fault can
// be served any more; it bounds staleness, it asserts nothing.
func outlastSharedAnswers() { time.Sleep(shareMaxAge + 100*time.Millisecond) }

// garbage is one way Prometheus (or something in front of it) answers badly.
type garbage struct {
	name  string
	fault framework.Fault
	// served is true when the answer still carries the real value, so a 200
	// with it is the documented behavior.
	served bool
}

var garbageAnswers = []garbage{
	{name: "HTTP 500", fault: framework.Fault{Status: http.StatusInternalServerError}},
	{name: "HTTP 502", fault: framework.Fault{Status: http.StatusBadGateway}},
	{name: "truncated JSON", fault: framework.Fault{Truncate: true}},
	{name: "NaN", fault: framework.Fault{Value: "NaN"}},
	{name: "+Inf", fault: framework.Fault{Value: "+Inf"}},
	{name: "-Inf", fault: framework.Fault{Value: "-Inf"}},
	{name: "an unparsable value", fault: framework.Fault{Value: "not-a-number"}},
	{name: "samples 10 years in the future", fault: framework.Fault{Shift: 10 * 365 * 24 * time.Hour}, served: true},
	{name: "samples 10 years in the past", fault: framework.Fault{Shift: -10 * 365 * 24 * time.Hour}, served: true},
}

// TestFaultPrometheusGarbage (fault 2): a proxy answers HTTP 5xx, truncated
// JSON, NaN/±Inf or unparsable values, and samples far in the future or the
// past. podpilot answers a clear 5xx (or 404 "no data" for NaN/Inf, which are
// dropped), or, for shifted timestamps, the real value with the sample's own
// timestamp (documented); it never panics, never serves a zero, and the
// PodAutoscaler never scales down (the load it reads stays at 3 replicas'
// worth, so any scale-down would come from garbage read as a low value).
func TestFaultPrometheusGarbage(t *testing.T) {
	ctx := t.Context()
	proxy := cluster.StartPrometheusProxy(t)
	p := takeOver(ctx, t, 1, "--prometheus-url="+proxy.URL, "--prometheus-timeout=2s", shareMaxAgeArg)[0]
	ns, _ := faultTarget(ctx, t, "fault-garbage")

	var figures []string
	for _, g := range garbageAnswers {
		proxy.Set(g.fault)
		outlastSharedAnswers()
		a, err := directGet(ctx, p, podsMetricPath(ns, "zdns_vanguard_qps"))
		if err != nil {
			t.Fatal(err)
		}
		checkGarbageAnswer(t, g, a)
		before := proxy.Queries()
		cluster.HoldReplicas(ctx, t, 3*sharedSyncPeriod, "Deployment", ns, "target", 3)
		figures = append(figures, fmt.Sprintf("%s → %d, %d rounds held", g.name, a.code, proxy.Queries()-before))
	}
	proxy.Set(framework.Fault{})
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionTrue)
	assertNoPanic(t, p)
	reportFault(t, "prometheus-garbage", "%s; no panic, no zero served, 0 scale-downs", strings.Join(figures, "; "))
}

func checkGarbageAnswer(t *testing.T, g garbage, a directAnswer) {
	t.Helper()
	switch {
	case g.served:
		if a.code != http.StatusOK {
			t.Errorf("%s: %d %s, want the value served with its own timestamp", g.name, a.code, a.body)
			return
		}
		var l metricValueList
		if err := json.Unmarshal([]byte(a.body), &l); err != nil {
			t.Fatalf("%s: decode %s: %v", g.name, a.body, err)
		}
		for _, it := range l.Items {
			if v := quantity(it.Value); v != 2000 {
				t.Errorf("%s: pod %s served %s, want the real 2000", g.name, it.DescribedObject.Name, it.Value)
			}
			if off := time.Until(it.Timestamp); (g.fault.Shift > 0) != (off > 0) || off.Abs() < g.fault.Shift.Abs()/2 {
				t.Errorf("%s: timestamp %s is not the sample's own (shifted %s)", g.name, it.Timestamp, g.fault.Shift)
			}
		}
	case g.fault.Value == "NaN" || strings.HasSuffix(g.fault.Value, "Inf"):
		if a.code != http.StatusNotFound {
			t.Errorf("%s: %d %s, want 404: NaN and ±Inf samples are dropped as no data", g.name, a.code, a.body)
		}
	default:
		if a.code < 500 {
			t.Errorf("%s: %d %s, want a 5xx", g.name, a.code, a.body)
		}
	}
}
