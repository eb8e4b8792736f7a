package metricsapi

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
)

// cadvisorSeries is one container's usage as cAdvisor exports it (with the labels
// cadvisorResourceRules read): cpu as a counter of seconds, memory as a gauge of bytes.
type cadvisorSeries struct {
	namespace, pod, container string
	cores, bytes              float64
}

// backfillCadvisor writes series scraped every 15 s from start to end as OpenMetrics, turns them
// into TSDB blocks with promtool and returns the TSDB's directory.
func backfillCadvisor(t *testing.T, series []cadvisorSeries, start, end time.Time) string {
	t.Helper()
	return backfill(t, func(w *bufio.Writer) {
		labels := func(s cadvisorSeries) string {
			return fmt.Sprintf("namespace=%q,kubernetes_pod=%q,kubernetes_container=%q,container=%q", s.namespace, s.pod, s.container, s.container)
		}
		fmt.Fprint(w, "# TYPE container_cpu_usage_seconds counter\n")
		for _, s := range series {
			for at := start; !at.After(end); at = at.Add(15 * time.Second) {
				fmt.Fprintf(w, "container_cpu_usage_seconds_total{%s} %g %d\n", labels(s), s.cores*at.Sub(start).Seconds(), at.Unix())
			}
		}
		fmt.Fprint(w, "# TYPE container_memory_working_set_bytes gauge\n")
		for _, s := range series {
			for at := start; !at.After(end); at = at.Add(15 * time.Second) {
				fmt.Fprintf(w, "container_memory_working_set_bytes{%s} %g %d\n", labels(s), s.bytes, at.Unix())
			}
		}
		fmt.Fprint(w, "# EOF\n")
	})
}

// servePrometheus runs Prometheus on tsdb on a free loopback port, scraping nothing, until the
// test ends, and returns a client of it.
func servePrometheus(t *testing.T, tsdb string) prometheus.Client {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(tsdb)
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	cmd := exec.CommandContext(ctx, "prometheus", "--config.file="+cfg, "--storage.tsdb.path="+tsdb,
		"--storage.tsdb.retention.time=100y", "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = log.Close()
	})
	url := "http://" + addr
	err = wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/-/ready", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil // not listening yet: poll again
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		out, _ := os.ReadFile(log.Name())
		t.Fatalf("prometheus on %s not ready: %v\n%s", tsdb, err, out)
	}
	c, err := prometheus.New(&prometheus.Config{Address: url, Timeout: 30 * time.Second, Method: http.MethodPost}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestResourceHistoryFromABackfilledPrometheus reads cAdvisor's series, backfilled into a real
// Prometheus, through resource rules: the sum over the target's pods (not a pod of a similar
// name, not the same pod name in another namespace, not the pod-level series without a
// container), per container for a ContainerResource metric, in cores and bytes, a NaN sample
// counting 0.
func TestResourceHistoryFromABackfilledPrometheus(t *testing.T) {
	for _, tool := range []string{"promtool", "prometheus"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: `make prometheus` (hack/install-prometheus.sh) installs it, as `make test-unit` does", tool)
		}
	}
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	const mi = 1 << 20
	var series []cadvisorSeries
	for _, pod := range []string{"web-5d8f9-abcde", "web-5d8f9-fghij"} {
		series = append(series,
			cadvisorSeries{"shop", pod, "app", 0.5, 100 * mi},
			cadvisorSeries{"shop", pod, "sidecar", 0.1, 20 * mi},
			cadvisorSeries{"shop", pod, "", 0.6, 120 * mi}) // the pod's own cgroup: no container
	}
	series = append(series,
		cadvisorSeries{"shop", "webhook-1", "app", 3, 1000 * mi},         // a name the pattern does not match
		cadvisorSeries{"other", "web-5d8f9-abcde", "app", 7, 1000 * mi},  // another namespace
		cadvisorSeries{"shop", "web-5d8f9-fghij", "init", 0, math.NaN()}) // a NaN sample is usage 0, as metrics.k8s.io serves it
	tsdb := backfillCadvisor(t, series, start, start.Add(20*time.Minute))
	opts := *NewOptions()
	opts.RulesFile = rulesFile(t, cadvisorResourceRules)
	p, _ := providerWith(t, servePrometheus(t, tsdb), opts)
	p = serve(t, p)
	pods := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		name      string
		resource  string
		container string
		want      float64
	}{
		{name: "cpu is the cores of every container of the target's pods", resource: "cpu", want: 1.2},
		{name: "memory is the bytes of every container of the target's pods", resource: "memory", want: 240 * mi},
		{name: "a ContainerResource's cpu is that container's cores over the target's pods", resource: "cpu", container: "app", want: 1},
		{name: "a ContainerResource's memory is that container's bytes over the target's pods", resource: "memory", container: "sidecar", want: 40 * mi},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := HistoryRequest{Namespace: "shop", Metric: tc.resource, Resource: pods, Names: "web-[a-z0-9]+-[a-z0-9]+", Container: tc.container,
				Start: start.Add(5 * time.Minute), End: start.Add(15 * time.Minute), Step: time.Minute}
			got, err := p.FreshReads().ResourceHistory(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 11 {
				t.Fatalf("%d values, want 11: %v", len(got), got)
			}
			for i, v := range got {
				if d := math.Abs(v - tc.want); math.IsNaN(d) || d > 1e-9*tc.want {
					t.Errorf("value %d = %g, want %g", i, v, tc.want)
				}
			}
		})
	}
}

// backfill writes OpenMetrics text with write into a file, turns it into TSDB blocks with promtool
// and returns the TSDB's directory.
func backfill(t *testing.T, write func(w *bufio.Writer)) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "series.om")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	write(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	tsdb := filepath.Join(dir, "tsdb")
	if out, err := exec.CommandContext(t.Context(), "promtool", "tsdb", "create-blocks-from", "openmetrics", path, tsdb).CombinedOutput(); err != nil {
		t.Fatalf("promtool tsdb create-blocks-from openmetrics: %v: %s", err, out)
	}
	return tsdb
}
