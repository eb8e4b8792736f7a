package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// metricValueList is the part of custom.metrics.k8s.io's and
// external.metrics.k8s.io's list responses the tests read.
type metricValueList struct {
	Kind  string `json:"kind"`
	Items []struct {
		DescribedObject struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"describedObject"`
		MetricName string `json:"metricName"` // external
		Metric     struct {
			Name string `json:"name"`
		} `json:"metric"`
		Value     string    `json:"value"`
		Timestamp time.Time `json:"timestamp"`
	} `json:"items"`
}

func getMetrics(ctx context.Context, path string) (*metricValueList, error) {
	b, err := cluster.RawGet(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", path, err)
	}
	var l metricValueList
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return &l, nil
}

// podValues returns pod name → value of a custom metrics list.
func (l *metricValueList) podValues() map[string]string {
	out := map[string]string{}
	for _, it := range l.Items {
		out[it.DescribedObject.Name] = it.Value
	}
	return out
}

// serveExporter starts an exporter that the cluster's Prometheus scrapes.
func serveExporter(t *testing.T) *exporter.Server {
	t.Helper()
	srv, err := exporter.Serve(clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer(":", "-", ".", "-", "/", "-").Replace(t.Name() + "-" + srv.Addr)
	if err := srv.RegisterTarget(cluster.TargetsDir, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// startWorkload creates a Deployment of n pods and waits until they run.
func startWorkload(ctx context.Context, t *testing.T, ns, name string, n int32) []string {
	t.Helper()
	if _, err := cluster.Client.AppsV1().Deployments(ns).Create(ctx, cluster.Deployment(name, n), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment %s: %v", name, err)
	}
	var names []string
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("%d pods of %s running", n, name), func(ctx context.Context) (bool, string, error) {
		pods, err := cluster.RunningPods(ctx, ns, name)
		names = names[:0]
		for _, p := range pods {
			names = append(names, p.Name)
		}
		return len(pods) == int(n), fmt.Sprintf("%d running", len(pods)), err
	})
	slices.Sort(names)
	return names
}

func TestCustomMetricsAPIServesExporterValues(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "cm")
	pods := startWorkload(ctx, t, ns, "vg1-vanguard", 3)
	exp := serveExporter(t)
	want := map[string]string{}
	for i, p := range pods {
		exp.SetGauge("zdns_vanguard_qps", map[string]string{"namespace": ns, "pod": p}, float64(1000*(i+1))+0.5)
		want[p] = fmt.Sprintf("%d500m", 1000*(i+1))
	}
	exp.SetGauge("zdns_vanguard_zone_count", map[string]string{"namespace": ns}, 7)

	for _, version := range []string{"v1beta2", "v1beta1"} {
		path := "/apis/custom.metrics.k8s.io/" + version + "/namespaces/" + ns + "/pods/*/zdns_vanguard_qps"
		framework.WaitFor(ctx, t, time.Minute, "exactly the exporter's values from "+path, func(ctx context.Context) (bool, string, error) {
			l, err := getMetrics(ctx, path)
			if err != nil {
				return false, "", err
			}
			got := l.podValues()
			return maps.Equal(got, want), fmt.Sprintf("got %v, want %v", got, want), nil
		})
	}

	t.Run("a named pod", func(t *testing.T) {
		path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/" + pods[1] + "/zdns_vanguard_qps"
		framework.WaitFor(ctx, t, 30*time.Second, "the named pod's value", func(ctx context.Context) (bool, string, error) {
			b, err := cluster.RawGet(ctx, path)
			return err == nil && strings.Contains(string(b), `"value":"`+want[pods[1]]+`"`), string(b), err
		})
	})
	t.Run("pods chosen by a label selector", func(t *testing.T) {
		path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/zdns_vanguard_qps?labelSelector=" +
			url.QueryEscape("app=vg1-vanguard")
		l, err := getMetrics(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.podValues(); !maps.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
	})
	t.Run("the namespace's own metric", func(t *testing.T) {
		path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/metrics/zdns_vanguard_zone_count"
		framework.WaitFor(ctx, t, 30*time.Second, "the namespace metric", func(ctx context.Context) (bool, string, error) {
			b, err := cluster.RawGet(ctx, path)
			return err == nil && strings.Contains(string(b), `"value":"7"`), string(b), err
		})
	})
	t.Run("an unknown metric is 404", func(t *testing.T) {
		_, err := cluster.RawGet(ctx, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+ns+"/pods/*/no_such_metric")
		if code := statusCode(err); code != http.StatusNotFound {
			t.Errorf("status %d (%v), want 404", code, err)
		}
	})
	t.Run("an unsupported selector operator is 400 and says so", func(t *testing.T) {
		path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/zdns_vanguard_qps?metricLabelSelector=" +
			url.QueryEscape("shard>1")
		_, err := cluster.RawGet(ctx, path)
		if code := statusCode(err); code != http.StatusBadRequest || !strings.Contains(err.Error(), "unsupported") {
			t.Errorf("status %d (%v), want 400 naming the unsupported operator", code, err)
		}
	})
}

func TestCustomMetricsAPIServesCounterAsPerSecondRate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "rate")
	pods := startWorkload(ctx, t, ns, "resolver", 2)
	exp := serveExporter(t)
	for _, p := range pods {
		exp.SetRate("zdns_resolver_queries_total", map[string]string{"namespace": ns, "pod": p}, 40)
	}
	// rate() over the default rules' 1m window reads low until the series is
	// a window old (see LOCAL-CLUSTER-NOTES.md), so this waits for a window.
	path := "/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/zdns_resolver_qps"
	framework.WaitFor(ctx, t, 3*time.Minute, "zdns_resolver_qps ≈ 40 per pod", func(ctx context.Context) (bool, string, error) {
		l, err := getMetrics(ctx, path)
		if err != nil {
			return false, "", err
		}
		got := l.podValues()
		ok := len(got) == len(pods)
		for _, v := range got {
			ok = ok && math.Abs(quantity(v)-40) < 1
		}
		return ok, fmt.Sprintf("%v", got), nil
	})
}

func TestExternalMetricsAPIServesSeries(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "ext")
	exp := serveExporter(t)
	exp.SetGauge("zdns_upstream_pending_queries", map[string]string{"namespace": ns, "upstream": "a"}, 42)
	exp.SetGauge("zdns_upstream_pending_queries", map[string]string{"namespace": ns, "upstream": "b"}, 8)
	for selector, want := range map[string]float64{"upstream=a": 42, "": 50} {
		path := "/apis/external.metrics.k8s.io/v1beta1/namespaces/" + ns + "/zdns_upstream_pending_queries"
		if selector != "" {
			path += "?labelSelector=" + url.QueryEscape(selector)
		}
		framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("external value %v for selector %q", want, selector), func(ctx context.Context) (bool, string, error) {
			l, err := getMetrics(ctx, path)
			if err != nil {
				return false, "", err
			}
			return len(l.Items) == 1 && quantity(l.Items[0].Value) == want, fmt.Sprintf("%+v", l.Items), nil
		})
	}
}

func TestMetricsAPIRefusesAnonymousClients(t *testing.T) {
	for _, path := range []string{
		"/apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/zdns_vanguard_qps",
		"/apis/external.metrics.k8s.io/v1beta1/namespaces/default/zdns_upstream_pending_queries",
	} {
		code, err := cluster.AnonymousGet(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("anonymous GET %s: status %d, want 401 or 403", path, code)
		}
	}
}
