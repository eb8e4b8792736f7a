package e2e

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestReadyWaitsForPrometheus (issue 21 §5): podpilot started while nothing listens at its
// --prometheus-url is not ready, and answers a metric request 503 naming Prometheus, not 404
// "metric not found"; once Prometheus answers there (a relay to the cluster's Prometheus
// starts on that port), the next discovery pass makes it ready and an unknown metric is a 404.
func TestReadyWaitsForPrometheus(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	port, err := framework.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := cluster.StartPodpilot(t, podpilotBinary, "--autoscaler-enabled=false", "--prometheus-url=http://"+addr,
		"--prometheus-timeout=2s", "--metrics-relist-interval=1s")

	// Wait until everything but discovery is ready, so that requests are authenticated.
	var verbose string
	err = framework.Poll(ctx, time.Minute, "podpilot ready but for discovery", func(ctx context.Context) (bool, string, error) {
		code, body, err := p.Get(ctx, "/readyz?verbose")
		verbose = body
		return err == nil && code != http.StatusOK && strings.Contains(body, "[+]delegated-authentication ok") &&
			strings.Contains(body, "[+]pod-cache ok") && strings.Contains(body, "[-]metrics-discovery failed"), body, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	notReady := 0
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for range 5 { // five more discovery passes: still not ready
		<-tick.C
		if code, _, err := p.Get(ctx, "/readyz"); err == nil && code != http.StatusOK {
			notReady++
		}
	}
	if notReady != 5 {
		t.Errorf("readyz passed %d times of 5 with Prometheus down", 5-notReady)
	}
	unknown := map[string]string{
		"custom":   podsMetricPath("default", "zdns_vanguard_qps"),
		"external": "/apis/external.metrics.k8s.io/v1beta1/namespaces/default/zdns_vanguard_qps",
	}
	for api, path := range unknown {
		a, err := directGet(ctx, p, path)
		if err != nil {
			t.Fatal(err)
		}
		if a.code != http.StatusServiceUnavailable || !strings.Contains(a.body, "prometheus unavailable") || !strings.Contains(a.body, "connection refused") {
			t.Errorf("%s metric with Prometheus down = %d %s, want 503 naming Prometheus", api, a.code, a.body)
		}
	}

	up := time.Now()
	startRelay(t, addr, cluster.PrometheusURL)
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	readyAfter := time.Since(up)
	a, err := directGet(ctx, p, strings.Replace(unknown["external"], "zdns_vanguard_qps", "no_such_metric", 1))
	if err != nil {
		t.Fatal(err)
	}
	if a.code != http.StatusNotFound {
		t.Errorf("unknown metric once ready = %d %s, want 404", a.code, a.body)
	}
	t.Logf("FIGURE readiness: not ready for %d polls over 5 s with Prometheus down (%s), custom and external requests 503 naming Prometheus; "+
		"ready %s after Prometheus came up (relist 1s); unknown metric then 404", notReady, firstLine(verbose, "metrics-discovery"), readyAfter.Round(time.Millisecond))
}

// startRelay serves a reverse proxy to target on addr until the test ends: Prometheus coming up
// at the address podpilot was given.
func startRelay(t *testing.T, addr, target string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: httputil.NewSingleHostReverseProxy(u), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("relay: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
}

// firstLine returns the first line of s containing substr.
func firstLine(s, substr string) string {
	for line := range strings.SplitSeq(s, "\n") {
		if strings.Contains(line, substr) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
