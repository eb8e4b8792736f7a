//go:build backends

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
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
	exp := serveExporter(t)
	for i, p := range pods {
		exp.SetGauge("zbk_named_qps", map[string]string{"namespace": ns, "pod": p}, float64(i+1))
	}
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(namedRuleYAML), 0o644); err != nil {
		t.Fatal(err)
	}
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
