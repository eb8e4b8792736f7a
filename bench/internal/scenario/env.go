package scenario

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/bench/internal/procstat"
	"github.com/podpilot/podpilot/bench/internal/promtext"
	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

// Env is the running bench cluster with podpilot, the exporter and the
// watches every scenario shares.
type Env struct {
	Cfg      Config
	Cluster  *framework.Cluster
	Podpilot *framework.Podpilot
	PP       versioned.Interface
	Exporter *exporter.Server
	Load     *Load
	Watch    *Watch
	// Log receives progress lines.
	Log io.Writer
	// OutDir and Prefix name the plots: OutDir/Prefix-<name>.svg.
	OutDir, Prefix string

	rulesFile string
	direct    *http.Client
	kcm       *http.Client
}

// logf prints a progress line.
func (e *Env) logf(format string, args ...any) {
	fmt.Fprintf(e.Log, "%s bench: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Start brings up the cluster in cfg.StateDir, podpilot, the exporter and
// the watches.
func Start(ctx context.Context, cfg Config, kwokPods int, log io.Writer, outDir, prefix string) (*Env, error) {
	for k, v := range map[string]string{
		"HPA_SYNC_PERIOD":            cfg.SyncPeriod.String(),
		"PROMETHEUS_SCRAPE_INTERVAL": cfg.ScrapeInterval.String(),
		"KWOK_NODE_PODS":             strconv.Itoa(kwokPods),
		"KCM_KUBE_API_QPS":           strconv.Itoa(cfg.KCMQPS),
		"KCM_KUBE_API_BURST":         strconv.Itoa(cfg.KCMBurst),
	} {
		if err := os.Setenv(k, v); err != nil {
			return nil, fmt.Errorf("set %s: %w", k, err)
		}
	}
	c, err := framework.Up(ctx, cfg.StateDir, cfg.ClusterEnv)
	if err != nil {
		// hack/local-up.sh leaves running what it started before a later step failed.
		down := exec.CommandContext(context.WithoutCancel(ctx), filepath.Join(framework.RepoRoot(), "hack", "local-down.sh"), cfg.StateDir)
		down.Stdout, down.Stderr = log, log
		if derr := down.Run(); derr != nil {
			fmt.Fprintf(log, "bench: hack/local-down.sh after a failed start: %v\n", derr)
		}
		return nil, err
	}
	e := &Env{Cfg: cfg, Cluster: c, Log: log, OutDir: outDir, Prefix: prefix}
	if err := e.start(ctx); err != nil {
		_ = e.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	return e, nil
}

func (e *Env) start(ctx context.Context) error {
	c := e.Cluster
	var err error
	if e.PP, err = versioned.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("podpilot clientset: %w", err)
	}
	if err := c.InstallCRDs(ctx); err != nil {
		return err
	}
	if e.Exporter, err = exporter.Serve(clock.RealClock{}); err != nil {
		return err
	}
	if err := e.Exporter.RegisterTarget(c.TargetsDir, "bench"); err != nil {
		return err
	}
	if e.Watch, err = StartWatch(ctx, c.Client, e.PP); err != nil {
		return err
	}
	e.Load = StartLoad(ctx, e.Exporter.Exporter, e.Watch)
	e.rulesFile = filepath.Join(c.StateDir, "bench-rules.yaml")
	if err := os.WriteFile(e.rulesFile, []byte(benchRules(e.Cfg.ScrapeInterval)), 0o644); err != nil {
		return fmt.Errorf("write rule file: %w", err)
	}
	if e.Podpilot, err = e.startMetricsServer(ctx, e.Cfg.PodpilotBinary, e.podpilotArgs()); err != nil {
		return err
	}
	if e.direct, err = rest.HTTPClientFor(c.DirectConfig(e.Podpilot)); err != nil {
		return fmt.Errorf("direct client: %w", err)
	}
	kcm := rest.CopyConfig(c.DirectConfig(e.Podpilot))
	kcm.Host = "https://127.0.0.1:" + c.KCMPort
	if e.kcm, err = rest.HTTPClientFor(kcm); err != nil {
		return fmt.Errorf("kube-controller-manager client: %w", err)
	}
	return e.Cluster.RegisterSomeMetricsAPIs(ctx, e.Podpilot.Port, customAPIs...)
}

// customAPIs are the APIServices the bench's rules serve (no resourceRules,
// so no metrics.k8s.io).
var customAPIs = []string{"v1beta2.custom.metrics.k8s.io", "v1beta1.custom.metrics.k8s.io", "v1beta1.external.metrics.k8s.io"}

func (e *Env) podpilotArgs() []string {
	args := []string{
		"--config=" + e.rulesFile, "--metrics-relist-interval=" + e.Cfg.RelistInterval.String(),
		"--autoscaler-sync-period=" + e.Cfg.SyncPeriod.String(), "-v=2",
	}
	return append(args, e.Cfg.PodpilotArgs...)
}

// startMetricsServer runs binary (podpilot or prometheus-adapter) with args
// and waits until it is ready.
func (e *Env) startMetricsServer(ctx context.Context, binary string, args []string) (*framework.Podpilot, error) {
	p, err := e.Cluster.RunPodpilot(binary, args...)
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(ctx, 2*time.Minute); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// writeSVG writes a plot next to the report and returns its image link.
func (e *Env) writeSVG(name, doc string) (report.Image, error) {
	file := e.Prefix + "-" + name + ".svg"
	if err := os.WriteFile(filepath.Join(e.OutDir, file), []byte(doc), 0o644); err != nil {
		return report.Image{}, fmt.Errorf("write plot: %w", err)
	}
	return report.Image{Alt: name, File: file}, nil
}

// Stop stops podpilot, the exporter and the cluster.
func (e *Env) Stop(ctx context.Context) error {
	if e.Podpilot != nil {
		e.Podpilot.Stop()
	}
	if e.Exporter != nil {
		_ = e.Exporter.Close()
	}
	return e.Cluster.Down(ctx)
}

// Pid returns the pid of a metrics server the bench started.
func (e *Env) Pid(p *framework.Podpilot) (int, error) {
	return e.pidFile(fmt.Sprintf("podpilot-%d", p.Port))
}

// pidFile reads the pid of a cluster component (prometheus, kube-apiserver, ...).
func (e *Env) pidFile(name string) (int, error) {
	b, err := os.ReadFile(filepath.Join(e.Cluster.StateDir, "pids", name+".pid"))
	if err != nil {
		return 0, fmt.Errorf("read pid of %s: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("parse pid of %s: %w", name, err)
	}
	return pid, nil
}

// CPU returns the CPU time a cluster component (by pid file name) has used.
func (e *Env) CPU(name string) time.Duration {
	pid, err := e.pidFile(name)
	if err != nil {
		return 0
	}
	d, _ := procstat.CPU(pid)
	return d
}

// PodpilotCPU returns the CPU time the bench's podpilot has used.
func (e *Env) PodpilotCPU() time.Duration {
	pid, err := e.Pid(e.Podpilot)
	if err != nil {
		return 0
	}
	d, _ := procstat.CPU(pid)
	return d
}

// PodpilotRSS returns the bench podpilot's resident memory in bytes.
func (e *Env) PodpilotRSS() int64 {
	pid, err := e.Pid(e.Podpilot)
	if err != nil {
		return 0
	}
	rss, _ := procstat.RSS(pid)
	return rss
}

// Metrics scrapes one component's /metrics: "podpilot", "apiserver", "kcm" or "prometheus".
func (e *Env) Metrics(ctx context.Context, component string) (promtext.Families, error) {
	var body []byte
	var err error
	switch component {
	case "podpilot":
		body, err = get(ctx, e.direct, fmt.Sprintf("https://127.0.0.1:%d/metrics", e.Podpilot.Port))
	case "kcm":
		body, err = get(ctx, e.kcm, "https://127.0.0.1:"+e.Cluster.KCMPort+"/metrics")
	case "apiserver":
		body, err = e.Cluster.RawGet(ctx, "/metrics")
	case "prometheus":
		body, err = get(ctx, http.DefaultClient, e.Cluster.PrometheusURL+"/metrics")
	default:
		return nil, fmt.Errorf("unknown component %q", component)
	}
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", component, err)
	}
	return promtext.Parse(body)
}

func get(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %d: %.200s", url, resp.StatusCode, b)
	}
	return b, nil
}
