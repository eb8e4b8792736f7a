package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/procfs"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/loadgen"
)

// hostRates are the two rates the host-level test offers, in queries/s.
var hostRates = []float64{500, 2000}

// hostHold is how long each rate is held.
const hostHold = 5 * time.Second

// TestWorkloadFollowsTheLoad builds the workload binary, runs it on
// loopback, drives it with the load generator at two rates and prints, for
// each, the queries/s its counter shows, its cpu (from /proc/<pid>/stat) and
// its resident memory. It asserts counts, never times: every answered query
// is counted, nothing fails, and the higher rate costs more cpu time.
func TestWorkloadFollowsTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the workload for about 15s")
	}
	w := startWorkload(t, "--startup-delay=500ms", "--shutdown-delay=1s")
	var cpus []float64
	for _, rate := range hostRates {
		m := w.measure(t, rate)
		t.Logf("at %5.0f queries/s offered: counter %6.0f queries/s, cpu %5.1f ms/s = %4.1f µs/query "+
			"(%.0f%% of a 100m request), RSS %5.1f MiB, held %5.1f MiB, %d requests skipped",
			rate, m.qps, m.cpuPerSecond*1000, m.cpuPerSecond/m.qps*1e6, m.cpuPerSecond/0.1*100,
			float64(m.rss)/(1<<20), m.held/(1<<20), m.counts.Skipped)
		if m.counts.Failed != 0 {
			t.Errorf("at %.0f queries/s, %d requests failed", rate, m.counts.Failed)
		}
		if m.queries != float64(m.counts.Answered*int64(w.batch)) {
			t.Errorf("at %.0f queries/s, the counter grew by %.0f, but %d requests of %d were answered",
				rate, m.queries, m.counts.Answered, w.batch)
		}
		cpus = append(cpus, m.cpu)
	}
	if cpus[1] <= cpus[0] {
		t.Errorf("cpu time at %.0f queries/s = %.2fs, at %.0f = %.2fs; want more at the higher rate",
			hostRates[0], cpus[0], hostRates[1], cpus[1])
	}
	w.stop(t)
}

// hostWorkload is a workload process on loopback.
type hostWorkload struct {
	cmd   *exec.Cmd
	url   string
	batch int
	exit  chan error
}

// startWorkload builds the workload as the image does (static) and starts it
// on a free loopback port with args, then waits until it is ready.
func startWorkload(t *testing.T, args ...string) *hostWorkload {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "workload")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the workload: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--listen=127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the workload: %v", err)
	}
	w := &hostWorkload{cmd: cmd, batch: loadgen.DefaultConfig("").Batch, exit: make(chan error, 1)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // already gone after stop
		if err := <-w.exit; err != nil {
			t.Logf("the workload was killed: %v", err)
		}
	})
	addr := make(chan string, 1)
	go w.follow(t, stderr, addr)
	select {
	case a := <-addr:
		w.url = "http://" + a
	case err := <-w.exit:
		t.Fatalf("the workload exited before serving: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the workload did not log its address within a minute")
	}
	w.waitReady(t, http.StatusOK)
	return w
}

var servingAddr = regexp.MustCompile(`"Serving" addr="([^"]+)"`)

// follow logs the workload's stderr, sends its address once it serves, and
// its exit when stderr closes.
func (w *hostWorkload) follow(t *testing.T, stderr io.Reader, addr chan<- string) {
	s := bufio.NewScanner(stderr)
	for s.Scan() {
		if m := servingAddr.FindStringSubmatch(s.Text()); m != nil {
			addr <- m[1]
		}
		fmt.Fprintln(os.Stderr, "workload:", s.Text())
	}
	w.exit <- w.cmd.Wait()
}

// waitReady waits until /readyz answers code.
func (w *hostWorkload) waitReady(t *testing.T, code int) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := httpGet(ctx, w.url+"/readyz")
		last = fmt.Sprint(got, err)
		return got == code, nil
	})
	if err != nil {
		t.Fatalf("/readyz never answered %d (last: %s): %v", code, last, err)
	}
}

func httpGet(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// hostMeasure is what one rate did.
type hostMeasure struct {
	counts        loadgen.Counts
	queries, qps  float64 // counter increase, and per second
	cpu           float64 // seconds of cpu time
	cpuPerSecond  float64
	rss           int
	held          float64 // zdns_vanguard_held_bytes at the end
	elapsedSecond float64
}

// measure offers rate for hostHold and reads the counter and /proc around it.
func (w *hostWorkload) measure(t *testing.T, rate float64) hostMeasure {
	t.Helper()
	g, err := loadgen.New(loadgen.DefaultConfig(w.url+"/query"), clock.RealClock{})
	if err != nil {
		t.Fatal(err)
	}
	q0, _ := w.scrape(t)
	stat0 := w.stat(t)
	start := time.Now()
	counts, err := g.Run(t.Context(), loadgen.Profile{{Name: "hold", Duration: hostHold, From: rate, To: rate}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start).Seconds()
	stat1 := w.stat(t)
	q1, held := w.scrape(t)
	m := hostMeasure{counts: counts, queries: q1 - q0, cpu: stat1.CPUTime() - stat0.CPUTime(),
		rss: stat1.ResidentMemory(), held: held, elapsedSecond: elapsed}
	m.qps, m.cpuPerSecond = m.queries/elapsed, m.cpu/elapsed
	return m
}

func (w *hostWorkload) stat(t *testing.T) procfs.ProcStat {
	t.Helper()
	p, err := procfs.NewProc(w.cmd.Process.Pid)
	if err != nil {
		t.Fatalf("read /proc of the workload: %v", err)
	}
	st, err := p.Stat()
	if err != nil {
		t.Fatalf("read /proc/%d/stat: %v", w.cmd.Process.Pid, err)
	}
	return st
}

// scrape returns the workload's query counter and held bytes.
func (w *hostWorkload) scrape(t *testing.T) (float64, float64) {
	t.Helper()
	families := scrapeURL(t, w.url+"/metrics")
	return families[queriesName].GetMetric()[0].GetCounter().GetValue(),
		families["zdns_vanguard_held_bytes"].GetMetric()[0].GetGauge().GetValue()
}

// scrapeURL GETs a /metrics URL and parses it.
func scrapeURL(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %d, %v", url, resp.StatusCode, err)
	}
	return parseMetrics(t, string(body))
}

// stop sends SIGTERM and checks that readiness fails before the process
// exits cleanly.
func (w *hostWorkload) stop(t *testing.T) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w.waitReady(t, http.StatusServiceUnavailable)
	select {
	case err := <-w.exit:
		w.exit <- err // for the cleanup
		if err != nil {
			t.Errorf("the workload exited with %v after SIGTERM, want 0", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("the workload did not exit within a minute of SIGTERM")
	}
}
