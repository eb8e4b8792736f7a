//go:build faults

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The long faults: built with the `faults` tag, run by `make test-faults`.

// replicaWatch polls the replicas of several Deployments every 250ms and
// counts every decrease it sees; Stop polls once more, so a change the test
// saw before it stopped the watch is counted too.
type replicaWatch struct {
	mu        sync.Mutex
	last      map[string]int32
	decreases []string
	quit      chan struct{}
	done      chan struct{}
}

func watchReplicas(ctx context.Context, ns string, names ...string) *replicaWatch {
	w := &replicaWatch{last: map[string]int32{}, quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			w.poll(ctx, ns, names)
			select {
			case <-ctx.Done():
				return
			case <-w.quit:
				w.poll(ctx, ns, names)
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	return w
}

// poll reads each Deployment's replicas once and records a decrease.
func (w *replicaWatch) poll(ctx context.Context, ns string, names []string) {
	for _, n := range names {
		got, err := cluster.Replicas(ctx, "Deployment", ns, n)
		if err != nil {
			continue
		}
		w.mu.Lock()
		if prev, ok := w.last[n]; ok && got < prev {
			w.decreases = append(w.decreases, fmt.Sprintf("%s %d→%d at %s", n, prev, got, time.Now().Format(time.TimeOnly)))
		}
		w.last[n] = got
		w.mu.Unlock()
	}
}

// Stop polls once more, ends the watch and returns the decreases it saw.
func (w *replicaWatch) Stop() []string {
	close(w.quit)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.decreases
}

// apiLoad is clients GETting a custom metrics path through the kube-apiserver
// in a bounded loop, counting answers by status and keeping every failure
// that is not a 503 naming Prometheus.
type apiLoad struct {
	mu    sync.Mutex
	codes map[int]int
	wrong []string
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

func startAPILoad(ctx context.Context, clients int, path string) *apiLoad {
	ctx, cancel := context.WithCancel(ctx)
	l := &apiLoad{codes: map[int]int{}, stop: cancel}
	for range clients {
		l.wg.Go(func() {
			for ctx.Err() == nil {
				_, err := cluster.RawGet(ctx, path)
				if ctx.Err() != nil {
					return
				}
				code := http.StatusOK
				if err != nil {
					code = statusCode(err)
				}
				l.mu.Lock()
				l.codes[code]++
				if err != nil && (code != http.StatusServiceUnavailable || !strings.Contains(strings.ToLower(err.Error()), "prometheus")) && len(l.wrong) < 10 {
					l.wrong = append(l.wrong, fmt.Sprintf("%d: %v", code, err))
				}
				l.mu.Unlock()
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
	return l
}

func (l *apiLoad) Stop() (map[int]int, []string) {
	l.stop()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.codes, l.wrong
}

// TestFaultPrometheusStoppedUnderLoad (fault 3): with a stock HPA and three
// PodAutoscalers active and 16 clients reading the metrics API, Prometheus is
// killed for 60 s. No target scales down, every failed request is a 503 naming
// Prometheus, and after the restart every PodAutoscaler reads its metric
// again within one sync period.
func TestFaultPrometheusStoppedUnderLoad(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "fault-outage")
	exp := serveExporter(t)
	names := []string{"hpa", "ppa-a", "ppa-b", "ppa-c"}
	for _, n := range names {
		startWorkload(ctx, t, ns, n, 1)
		l := cluster.NewLoad(ctx, exp, ns, n, "zdns_vanguard_qps", false)
		t.Cleanup(l.Stop)
		if n == "hpa" {
			l.Set(300) // 3 replicas at target 100
		} else {
			l.Set(6000) // 3 replicas at target 2000
		}
	}
	if _, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Create(ctx, framework.PodsMetricHPA("hpa", "zdns_vanguard_qps", 100, 1, 5), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create HPA: %v", err)
	}
	for _, n := range names[1:] {
		applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML(n, "deployment", n, 1, 5, "zdns_vanguard_qps", "2000", noScaleDownPolicy))
	}
	for _, n := range names {
		cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, n, 3)
	}
	watch := watchReplicas(ctx, ns, names...)
	load := startAPILoad(ctx, 16, podsMetricsPathAggregated(ns))

	restart, err := cluster.StopPrometheus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	for _, n := range names[1:] {
		waitPodAutoscalerCondition(ctx, t, ns, n, "ScalingActive", metav1.ConditionFalse)
	}
	select { // the rest of the 60 s outage, not an assertion
	case <-time.After(time.Until(stopped.Add(60 * time.Second))):
	case <-ctx.Done():
	}
	if err := restart(context.WithoutCancel(ctx)); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	var worst time.Duration
	for _, n := range names[1:] {
		waitPodAutoscalerCondition(ctx, t, ns, n, "ScalingActive", metav1.ConditionTrue)
		worst = max(worst, time.Since(back))
	}
	waitHPAActive(ctx, t, ns, "hpa")
	codes, wrong := load.Stop()
	decreases := watch.Stop()
	if len(decreases) > 0 {
		t.Errorf("%d scale-downs during the outage: %v", len(decreases), decreases)
	}
	if len(wrong) > 0 {
		t.Errorf("failed requests that are not a 503 naming Prometheus: %v", wrong)
	}
	// Prometheus answers again only after replaying its WAL; podpilot's
	// rounds follow within a sync period of the first good answer.
	checkTiming(t, worst <= 2*sharedSyncPeriod+time.Second, "PodAutoscalers active again %s after Prometheus was ready, promised within one sync period (%s) of podpilot's first good answer", worst, sharedSyncPeriod)
	assertNoPanic(t, metricsServer)
	reportFault(t, "prometheus-stopped-60s", "0 wrong scale-downs (%d seen) over 1 HPA and 3 PodAutoscalers; API answers by status %v, %d not a 503 naming Prometheus; all PodAutoscalers active again %s after Prometheus was ready",
		len(decreases), codes, len(wrong), worst.Round(time.Millisecond))
}

func podsMetricsPathAggregated(ns string) string { return podsMetricPath(ns, "zdns_vanguard_qps") }

func waitHPAActive(ctx context.Context, t *testing.T, ns, name string) {
	t.Helper()
	framework.WaitFor(ctx, t, 2*time.Minute, "the HPA ScalingActive=True", func(ctx context.Context) (bool, string, error) {
		h, err := cluster.Client.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return hpaCondition(h, autoscalingv2.ScalingActive) == corev1.ConditionTrue, hpaConditions(h), nil
	})
}

// TestFaultLeaderKilledMidWindow (fault 5): two podpilots with leader
// election; the load drops under a PodAutoscaler with a 30 s scale-down
// stabilization window, and the leader is SIGKILLed inside the window. The
// follower takes the Lease within the lease duration, scales down no earlier
// than the window (measured from the persisted recommendations) allows, and
// the scale-down happens exactly once.
func TestFaultLeaderKilledMidWindow(t *testing.T) {
	ctx := t.Context()
	const lease, retry, window = 8 * time.Second, time.Second, 30 * time.Second
	ps := twoLeaders(ctx, t, lease, retry)
	ns := cluster.CreateNamespace(ctx, t, "fault-leader")
	lead, follower := leader(ctx, t, ps, ns, "target")
	startWorkload(ctx, t, ns, "target", 1)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, "target", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(8000) // 4 replicas
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 5, "zdns_vanguard_qps", "2000",
		fmt.Sprintf("  behavior: {scaleDown: {stabilizationWindowSeconds: %d}}\n", int(window.Seconds()))))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "target", 4)
	watch := watchReplicas(ctx, ns, "target")

	load.Set(1000) // 1 replica, once the window has passed
	framework.WaitFor(ctx, t, time.Minute, "the leader to recommend 1 replica", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, "target")
		if err != nil {
			return false, "", err
		}
		recs := pa.Status.Recommendations
		return len(recs) > 0 && recs[len(recs)-1].Replicas == 1, fmt.Sprint(recs), nil
	})
	oldHolder, err := leaseHolder(ctx, ns, "target")
	if err != nil {
		t.Fatal(err)
	}
	// The history the leader persisted, read before it dies: the window is
	// measured from it (later rounds prune what falls out of the window).
	atKill, err := getPodAutoscaler(ctx, t, ns, "target")
	if err != nil {
		t.Fatal(err)
	}
	if err := lead.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	var newHolder string
	framework.WaitFor(ctx, t, 2*lease+10*time.Second, "the follower to take the Lease", func(ctx context.Context) (bool, string, error) {
		h, err := leaseHolder(ctx, ns, "target")
		newHolder = h
		return err == nil && h != "" && h != oldHolder, "holder " + h, err
	})
	takeover := time.Since(killed)
	checkTookOver(ctx, t, follower, newHolder)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "target", 1)
	decreases := watch.Stop()
	pa, err := getPodAutoscaler(ctx, t, ns, "target")
	if err != nil {
		t.Fatal(err)
	}
	early, windowEnd := checkWindowRespected(t, atKill.Status.Recommendations, pa.Status.LastScaleTime, window)
	rescales := rescaleEvents(ctx, t, ns, "target", "1")
	var downs []podpilotv1alpha1.ScaleEvent
	if pa.Status.ScaleEvents != nil {
		downs = pa.Status.ScaleEvents.ScaleDown
	}
	if len(decreases) != 1 || rescales != 1 || len(downs) != 1 {
		t.Errorf("scale-down not exactly once: replica decreases %v, %d SuccessfulRescale events to 1, status scale-down events %v",
			decreases, rescales, downs)
	}
	// The lease runs from the last renewal the follower observed: up to one
	// retry period before the kill, observed up to one retry period late.
	checkTiming(t, takeover <= lease+2*retry+time.Second, "takeover %s, promised within the lease duration %s (+ 2 retry periods of %s)", takeover, lease, retry)
	assertNoPanic(t, follower)
	reportFault(t, "leader-killed-mid-window", "follower took the Lease %s after SIGKILL (lease %s); scaled down %s after the window ended (%s early); %d replica decrease, %d SuccessfulRescale event, %d status scale-down event for 1 decision",
		takeover.Round(time.Millisecond), lease, pa.Status.LastScaleTime.Sub(windowEnd), early, len(decreases), rescales, len(downs))
}

// checkWindowRespected checks that the scale-down (at scaled) came no earlier
// than the window after the last recommendation above 1 in recs, and returns
// how early it was (0 if not) and when the window ended.
func checkWindowRespected(t *testing.T, recs []podpilotv1alpha1.Recommendation, scaled *metav1.Time, window time.Duration) (time.Duration, time.Time) {
	t.Helper()
	if scaled == nil {
		t.Fatal("no lastScaleTime after the scale-down")
	}
	lastHigh := framework.LastRecommendedAbove(t, recs, 1)
	end := lastHigh.Add(window)
	// Timestamps are persisted to the second.
	if early := end.Sub(scaled.Time); early > time.Second {
		t.Errorf("scaled down at %s, %s before the window ended at %s (last recommendation above 1 at %s)", scaled, early, end, lastHigh)
		return early, end
	}
	return 0, end
}

// rescaleEvents counts the SuccessfulRescale events of a PodAutoscaler whose
// message names the new size.
func rescaleEvents(ctx context.Context, t *testing.T, ns, name, size string) int {
	t.Helper()
	events, err := cluster.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		if e.Reason == "SuccessfulRescale" && strings.Contains(e.Message, "New size: "+size+";") {
			n++
		}
	}
	return n
}

// TestFaultAPIOverload (fault 7): 200 concurrent clients GET pods/* from
// podpilot itself (loopback) for 60 s. podpilot answers /readyz throughout,
// answers only 200 or 429, its RSS stays bounded, and the autoscaler's rounds
// keep to their sync period meanwhile.
func TestFaultAPIOverload(t *testing.T) {
	ctx := t.Context()
	// The proxy only times the autoscaler's rounds: each is one query with
	// the PodAutoscaler's namespace in it.
	proxy := cluster.StartPrometheusProxy(t)
	p := takeOver(ctx, t, 1, "--prometheus-url="+proxy.URL)[0]
	ns := cluster.CreateNamespace(ctx, t, "fault-overload")
	exp := serveExporter(t)
	startWorkload(ctx, t, ns, "target", 3)
	load := cluster.NewLoad(ctx, exp, ns, "target", "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(6000)
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML("target", "deployment", "target", 1, 5, "zdns_vanguard_qps", "2000", ""))
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionTrue)
	// The clients read another namespace's pods.
	floodNS := cluster.CreateNamespace(ctx, t, "fault-overload-clients")
	startWorkload(ctx, t, floodNS, "web", 3)
	floodLoad := cluster.NewLoad(ctx, exp, floodNS, "web", "zdns_vanguard_qps", false)
	t.Cleanup(floodLoad.Stop)
	floodLoad.Set(300)
	framework.WaitFor(ctx, t, time.Minute, "the clients' metric served", func(ctx context.Context) (bool, string, error) {
		a, err := directGet(ctx, p, podsMetricPath(floodNS, "zdns_vanguard_qps"))
		return err == nil && a.code == http.StatusOK, fmt.Sprintf("%d %s", a.code, a.body), err
	})
	rssBefore, err := p.RSS()
	if err != nil {
		t.Fatal(err)
	}

	const clients, duration = 200, 60 * time.Second
	var codes sync.Map // int → *atomic.Int64
	count := func(code int) {
		v, _ := codes.LoadOrStore(code, new(atomic.Int64))
		v.(*atomic.Int64).Add(1)
	}
	floodCtx, stopFlood := context.WithTimeout(ctx, duration)
	defer stopFlood()
	start := time.Now()
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for floodCtx.Err() == nil {
				a, err := directGet(floodCtx, p, podsMetricPath(floodNS, "zdns_vanguard_qps"))
				switch {
				case err == nil:
					count(a.code)
				case !errors.Is(err, context.DeadlineExceeded) && floodCtx.Err() == nil:
					count(-1) // transport error
				}
			}
		})
	}
	var peak int64
	var slowestReady time.Duration
	readyFailures := 0
	for floodCtx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		t0 := time.Now()
		code, body, err := p.Get(rctx, "/readyz")
		cancel()
		slowestReady = max(slowestReady, time.Since(t0))
		if err != nil || code != http.StatusOK || body != "ok" {
			readyFailures++
			t.Logf("/readyz under load: %d %q %v", code, body, err)
		}
		if rss, err := p.RSS(); err == nil {
			peak = max(peak, rss)
		}
		select {
		case <-floodCtx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
	wg.Wait()
	flood := time.Since(start)

	byCode := map[int]int64{}
	var other []string
	codes.Range(func(k, v any) bool {
		byCode[k.(int)] = v.(*atomic.Int64).Load()
		if c := k.(int); c != http.StatusOK && c != http.StatusTooManyRequests {
			other = append(other, fmt.Sprintf("%d×%d", c, byCode[c]))
		}
		return true
	})
	sort.Strings(other)
	if len(other) > 0 {
		t.Errorf("answers other than 200 or 429 (-1 = transport error): %v", other)
	}
	if readyFailures > 0 {
		t.Errorf("/readyz failed %d times under load", readyFailures)
	}
	rounds, gap := roundGaps(proxy.QueryTimes(`namespace="`+ns+`"`), start, start.Add(flood))
	checkTiming(t, gap <= sharedSyncPeriod+time.Second, "longest gap between autoscaler rounds under load %s, sync period %s", gap, sharedSyncPeriod)
	assertNoPanic(t, p)
	reportFault(t, "api-overload", "%d clients for %s: answers %v, /readyz ok throughout (slowest %s), RSS %d MiB → peak %d MiB, %d autoscaler rounds, longest gap between them %s (sync period %s)",
		clients, flood.Round(time.Second), byCode, slowestReady.Round(time.Millisecond), rssBefore>>20, peak>>20, rounds, gap.Round(time.Millisecond), sharedSyncPeriod)
}

// roundGaps counts the autoscaler's rounds (their query times) within
// [from, to] and returns the longest time without one.
func roundGaps(times []time.Time, from, to time.Time) (int, time.Duration) {
	var gap time.Duration
	prev, n := from, 0
	for _, ts := range times {
		if ts.Before(from) || ts.After(to) {
			continue
		}
		gap = max(gap, ts.Sub(prev))
		prev = ts
		n++
	}
	return n, max(gap, to.Sub(prev))
}
