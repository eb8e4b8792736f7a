//go:build backends

package e2e

// The backend tier (make test-backends, hack/test-backends.sh): these tests, plus the metrics-API
// and PodAutoscaler e2e cases named in hack/test-backends.sh, run once per PODPILOT_BACKEND
// (prometheus, victoriametrics, thanos; docs/backends.md). Each asserts what podpilot promises
// on every backend and reports (BACKEND lines) what the backend answered, so a difference
// between backends is one grep over the tier's logs.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// reportBackend logs one BACKEND line naming the backend the tier runs against.
func reportBackend(t *testing.T, name, format string, args ...any) {
	t.Helper()
	framework.Report(t, "BACKEND", cluster.Backend+"/"+name, format, args...)
}

// TestBackendDiscoveryListsTheSeries: forty gauges of one namespace's pods appear in
// custom.metrics.k8s.io's discovery, listed from the backend's series API.
func TestBackendDiscoveryListsTheSeries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "bk-disc")
	pods := startWorkload(ctx, t, ns, "disc", 2)
	exp := serveExporter(t)
	const n = 40
	var want []string
	for i := range n {
		name := fmt.Sprintf("zbk_discovered_%02d", i)
		want = append(want, "pods/"+name)
		for _, p := range pods {
			exp.SetGauge(name, map[string]string{"namespace": ns, "pod": p}, float64(i))
		}
	}
	start := time.Now()
	framework.WaitFor(ctx, t, 2*time.Minute, fmt.Sprintf("the %d gauges in discovery", n), func(ctx context.Context) (bool, string, error) {
		b, err := cluster.RawGet(ctx, "/apis/custom.metrics.k8s.io/v1beta2")
		if err != nil {
			return false, "", err
		}
		var missing []string
		for _, w := range want {
			if !strings.Contains(string(b), `"name":"`+w+`"`) {
				missing = append(missing, w)
			}
		}
		return len(missing) == 0, fmt.Sprintf("%d missing, e.g. %.3q", len(missing), missing), nil
	})
	reportBackend(t, "discovery", "%d new gauges listed %s after their first export", n, time.Since(start).Round(time.Second))
}

// TestBackendFreshSampleDelay: a gauge that changes is read at its new value by the API within a
// bound; how long it took is the backend's visibility delay plus podpilot's (relist, sharing).
func TestBackendFreshSampleDelay(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "bk-fresh")
	pods := startWorkload(ctx, t, ns, "fresh", 1)
	exp := serveExporter(t)
	labels := map[string]string{"namespace": ns, "pod": pods[0]}
	exp.SetGauge("zbk_fresh_qps", labels, 1)
	path := podsMetricPath(ns, "zbk_fresh_qps")
	waitValue := func(want string, timeout time.Duration) {
		framework.WaitFor(ctx, t, timeout, "zbk_fresh_qps = "+want, func(ctx context.Context) (bool, string, error) {
			l, err := getMetrics(ctx, path)
			if err != nil {
				return false, err.Error(), nil // not yet discovered: 404
			}
			got := l.podValues()
			return got[pods[0]] == want, fmt.Sprint(got), nil
		})
	}
	waitValue("1", 2*time.Minute)
	exp.SetGauge("zbk_fresh_qps", labels, 2)
	changed := time.Now()
	waitValue("2", 2*time.Minute)
	reportBackend(t, "fresh-sample", "a gauge's new value read through the custom metrics API %s after the exporter changed it (scrape interval 1s)",
		time.Since(changed).Round(100*time.Millisecond))
}

// namedRuleYAML is a rule that restricts to the requested pods only through .LabelValuesByName, as
// prometheus-adapter's users write it: not separable, so podpilot asks by name, and the query
// grows with the number of pods.
const namedRuleYAML = `rules:
- seriesQuery: 'zbk_named_qps{namespace!="",pod!=""}'
  resources:
    overrides:
      namespace: {resource: namespace}
      pod: {resource: pod}
  metricsQuery: 'sum(<<.Series>>{namespace="<<index .LabelValuesByName "namespace">>",pod=~"<<index .LabelValuesByName "pod">>"}) by (pod)'
`

// exportNamedQPS exports zbk_named_qps = i+1 for the i-th of pods in ns and returns a rule file
// holding namedRuleYAML.
func exportNamedQPS(t *testing.T, ns string, pods []string) string {
	t.Helper()
	exp := serveExporter(t)
	for i, p := range pods {
		exp.SetGauge("zbk_named_qps", map[string]string{"namespace": ns, "pod": p}, float64(i+1))
	}
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(namedRuleYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return rulesFile
}

// longQueryPods is how many pods the long-query case selects: with the workload's long name
// their names' alternation is about 19 KiB, past VictoriaMetrics' default
// -search.maxQueryLen (16 KiB) and podpilot's default --metrics-max-query-bytes (15 KiB).
const longQueryPods = 300

// longQueryWorkload is a 52-character Deployment name: its pods' names are 63 characters.
const longQueryWorkload = "a-workload-whose-name-makes-every-pod-name-long-0001"

// TestBackendLongQueryIsSplit: a request for 300 pods by name, whose unsplit query is ~19 KiB,
// answers every pod through podpilot's splitting at its default limit on every backend; the same
// request with splitting lifted (--metrics-max-query-bytes=64Ki) shows what the backend does with
// the long query: Prometheus and Thanos answer it, VictoriaMetrics refuses it with a 400 "too
// long query" (-search.maxQueryLen) and podpilot answers 500 naming the backend's error (a query
// the backend calls bad is podpilot's error, not the client's, and no retry mends it).
func TestBackendLongQueryIsSplit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "bk-long")
	pods := startWorkload(ctx, t, ns, longQueryWorkload, longQueryPods)
	rulesFile := exportNamedQPS(t, ns, pods)
	path := podsMetricPath(ns, "zbk_named_qps") + "?labelSelector=" + url.QueryEscape("app="+longQueryWorkload)
	for _, c := range []struct {
		name  string
		extra []string
		split bool
	}{
		{name: "split at the default limit", split: true},
		{name: "unsplit", extra: []string{"--metrics-max-query-bytes=65536"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			proxy, err := framework.NewPrometheusProxy(cluster.BackendURL, "127.0.0.1")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(proxy.Close)
			args := append([]string{"--config=" + rulesFile, "--metrics-relist-interval=2s", "--autoscaler-enabled=false",
				"--prometheus-url=" + proxy.URL}, c.extra...)
			p := cluster.StartPodpilot(t, podpilotBinary, args...)
			if err := p.WaitReady(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			var a directAnswer
			requests := 0
			err = framework.Poll(ctx, 2*time.Minute, "an answer naming every pod, or the backend's refusal", func(ctx context.Context) (bool, string, error) {
				a, err = directGet(ctx, p, path)
				if err != nil {
					return false, "", err
				}
				requests++
				if a.code == http.StatusOK {
					n := strings.Count(a.body, `"describedObject"`)
					return n == longQueryPods, fmt.Sprintf("%d of %d pods", n, longQueryPods), nil
				}
				// Not discovered yet is 404; a refusal of the long query is a 5xx.
				return a.code >= 500, fmt.Sprintf("%d %.300s", a.code, a.body), nil
			})
			if err != nil {
				t.Fatalf("%v (last answer %d %.500s)", err, a.code, a.body)
			}
			lengths := proxy.QueryLengths("zbk_named_qps")
			longest := slices.Max(append(lengths, 0))
			refusedByBackend := cluster.Backend == "victoriametrics" && !c.split
			switch {
			case refusedByBackend && (a.code != http.StatusInternalServerError || !strings.Contains(a.body, "too long query")):
				t.Errorf("unsplit %d-byte query to VictoriaMetrics answered %d %.500s, want 500 with its \"too long query\"", longest, a.code, a.body)
			case !refusedByBackend && a.code != http.StatusOK:
				t.Errorf("answered %d %.500s, want every pod's value", a.code, a.body)
			case c.split && longest > 15<<10:
				t.Errorf("longest query %d bytes, want at most --metrics-max-query-bytes (15 KiB)", longest)
			case !c.split && longest <= 16<<10:
				t.Errorf("longest query %d bytes: the case needs one past 16 KiB", longest)
			}
			msg := a.body
			if i := strings.Index(msg, "…"); a.code != http.StatusOK && i >= 0 {
				msg = msg[i:] // the backend's error, after the elided query
			}
			reportBackend(t, "long-query/"+strings.ReplaceAll(c.name, " ", "-"), "%d pods by name: %d queries over %d requests, longest %d bytes; answered %d %.160s",
				longQueryPods, len(lengths), requests, longest, a.code, msg)
		})
	}
}

// TestBackendStoreDownHoldsReplicas: the store behind the backend stops (the Thanos sidecar,
// with its querier still answering; VictoriaMetrics; Prometheus) while the load would ask for
// 1 replica: the metrics API answers 503 naming the unavailable backend and the PodAutoscaler
// holds its 3 replicas; once the store is back it scales down. Against Thanos it also reports
// what the querier answers a client that does not send partial_response=false.
func TestBackendStoreDownHoldsReplicas(t *testing.T) {
	ctx := t.Context()
	p := takeOver(ctx, t, 1, shareMaxAgeArg)[0]
	ns, load := faultTarget(ctx, t, "bk-down")

	// The process to stop, and the URL that answers 200 once it is back (the querier is always
	// ready: the sidecar's return shows as the scale-down).
	stores := map[string][2]string{
		"thanos":          {"thanos-sidecar", cluster.BackendURL + "/-/ready"},
		"victoriametrics": {"victoriametrics", cluster.BackendURL + "/health"},
		"prometheus":      {"prometheus", cluster.PrometheusURL + "/-/ready"},
	}
	store, ready := stores[cluster.Backend][0], stores[cluster.Backend][1]
	restart, err := cluster.StopProcess(ctx, store, ready)
	if err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = restart(context.WithoutCancel(ctx))
		}
	})
	load.Set(10) // were it read, 1 replica
	outlastSharedAnswers()
	var a directAnswer
	framework.WaitFor(ctx, t, time.Minute, "the pods metric 503 naming the unavailable backend", func(ctx context.Context) (bool, string, error) {
		a, err = directGet(ctx, p, podsMetricPath(ns, "zdns_vanguard_qps"))
		return err == nil && a.code == http.StatusServiceUnavailable && strings.Contains(a.body, "prometheus unavailable"),
			fmt.Sprintf("%d %.300s", a.code, a.body), err
	})
	waitPodAutoscalerCondition(ctx, t, ns, "target", "ScalingActive", metav1.ConditionFalse)
	cluster.HoldReplicas(ctx, t, 4*sharedSyncPeriod, "Deployment", ns, "target", 3)
	warned, failed := partialCounters(ctx, t, p)
	if cluster.Backend == "thanos" {
		// What podpilot is spared by sending partial_response=false: the querier's own default.
		code, body := backendGet(ctx, t, "/api/v1/query?query="+url.QueryEscape(`zdns_vanguard_qps{namespace="`+ns+`"}`))
		reportBackend(t, "store-down/partial-response-default", "the querier asked without partial_response: %d %.300s", code, body)
	}

	if err := restart(ctx); err != nil {
		t.Fatalf("restart %s: %v", store, err)
	}
	restarted = true
	back := time.Now()
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, "target", 1)
	assertNoPanic(t, p)
	msg := a.body
	if i := strings.Index(msg, "prometheus unavailable"); i >= 0 {
		msg = msg[i:]
	}
	reportBackend(t, "store-down", "%s stopped: pods metric → %d %.300s; held 3 replicas with ScalingActive=False over 4 sync periods "+
		"(%g answers with warnings, %g calls failed as partial); scaled to 1 %s after it restarted",
		store, a.code, msg, warned, failed, time.Since(back).Round(time.Second))
}

// backendGet GETs path from the backend itself, with no podpilot in between.
func backendGet(ctx context.Context, t *testing.T, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cluster.BackendURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// largeTargetPods is the size of the large target: issue 33's 5,000 pods, whose names'
// alternation (about 105 KiB) is past every backend's query limit several times over.
const largeTargetPods = 5000

// TestBackendFiveThousandPodTargetAnswersWhole: the HPA's request for a 5,000-pod target's pods
// metric by label selector, through a rule that can only ask by name (.LabelValuesByName), answers
// every pod on every backend at podpilot's default --metrics-max-query-bytes, VictoriaMetrics'
// default 16 KiB -search.maxQueryLen included, and reports the longest query it sent. The pods are
// created directly, named and labelled as a Deployment's (its ReplicaSet controller, at
// kube-controller-manager's 20 writes a second, would take four minutes to create them); podpilot
// selects them by the label selector an HPA sends, whatever their phase, as it does a
// Deployment's.
func TestBackendFiveThousandPodTargetAnswersWhole(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "bk-5000")
	start := time.Now()
	pods := createLabelledPods(ctx, t, ns, "web", largeTargetPods)
	created := time.Since(start)
	rulesFile := exportNamedQPS(t, ns, pods)
	proxy, err := framework.NewPrometheusProxy(cluster.BackendURL, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Close)
	p := cluster.StartPodpilot(t, podpilotBinary, "--config="+rulesFile, "--metrics-relist-interval=2s",
		"--autoscaler-enabled=false", "--prometheus-url="+proxy.URL)
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	path := podsMetricPath(ns, "zbk_named_qps") + "?labelSelector=" + url.QueryEscape("app=web")
	var a directAnswer
	requests, exported := 0, time.Now()
	err = framework.Poll(ctx, 3*time.Minute, "an answer naming every pod", func(ctx context.Context) (bool, string, error) {
		a, err = directGet(ctx, p, path)
		if err != nil {
			return false, "", err
		}
		requests++
		if a.code != http.StatusOK {
			// Not discovered yet is a 404; the backend's refusal of a query is a 5xx, and fails.
			return a.code >= 500, fmt.Sprintf("%d %.300s", a.code, a.body), nil
		}
		n := strings.Count(a.body, `"describedObject"`)
		return n == largeTargetPods, fmt.Sprintf("%d of %d pods", n, largeTargetPods), nil
	})
	if err != nil {
		t.Fatalf("%v (last answer %d %.500s)", err, a.code, a.body)
	}
	if a.code != http.StatusOK {
		t.Fatalf("answered %d %.500s, want every pod's value", a.code, a.body)
	}
	var l metricValueList
	if err := json.Unmarshal([]byte(a.body), &l); err != nil {
		t.Fatalf("decode the answer: %v", err)
	}
	got, wrong := l.podValues(), 0
	for i, pod := range pods {
		if q, err := resource.ParseQuantity(got[pod]); err != nil || q.Value() != int64(i+1) {
			if wrong++; wrong <= 5 {
				t.Errorf("pod %s: value %q, want %d", pod, got[pod], i+1)
			}
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d pods with a wrong or missing value", wrong, largeTargetPods)
	}
	lengths := proxy.QueryLengths("zbk_named_qps")
	longest := slices.Max(append(lengths, 0))
	if longest > 15<<10 {
		t.Errorf("longest query %d bytes, want at most --metrics-max-query-bytes (15 KiB)", longest)
	}
	reportBackend(t, "5000-pods", "%d pods by label selector (pods created in %s): every pod answered %s after their first export, %d requests, %d queries, longest %d bytes",
		largeTargetPods, created.Round(time.Second), time.Since(exported).Round(time.Second), requests, len(lengths), longest)
}

// createLabelledPods creates n pods in ns labelled app=name and named as a Deployment's
// (name-<hash>-<5 characters>), with 16 writers, and returns their names in the order created.
func createLabelledPods(ctx context.Context, t *testing.T, ns, name string, n int) []string {
	t.Helper()
	hash := rand.String(10)
	seen := make(map[string]bool, n)
	names := make([]string, 0, n)
	for len(names) < n { // 5 random characters collide within a few thousand: draw again
		pod := fmt.Sprintf("%s-%s-%s", name, hash, rand.String(5))
		if !seen[pod] {
			seen[pod] = true
			names = append(names, pod)
		}
	}
	// The ServiceAccount admission refuses pods until the namespace's default ServiceAccount exists
	// (the ReplicaSet controller retries; so does this wait).
	framework.WaitFor(ctx, t, time.Minute, "the default ServiceAccount of "+ns, func(ctx context.Context) (bool, string, error) {
		_, err := cluster.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err), nil
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, pod := range names {
		g.Go(func() error {
			_, err := cluster.Client.CoreV1().Pods(ns).Create(gctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: pod, Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "localhost/podpilot/pause:local"}}},
			}, metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("create pod %s: %w", pod, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	return names
}
