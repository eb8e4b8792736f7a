// Command nodebench is `make bench-node`: podpilot installed by its chart on
// the real node (PODPILOT_NODE=real) and measured as its users meet it. By
// default at the defaults users run: kube-controller-manager's HPA at its
// defaults, metrics-server for metrics.k8s.io, prometheus-adapter for
// custom.metrics.k8s.io, podpilot at its chart's defaults; load steps (cpu
// and a custom metric) on real pods time a PodAutoscaler against the stock
// HPA, split into metric lag, decision and pod start-up. --tuned runs the
// same with both sync periods at 5s; the sections footprint and utilization
// (podpilot's own pods, its metrics.k8s.io against metrics-server) install
// podpilot as the real-node tests do. It writes
// bench/results/node-<date>-<sha>[-tuned].md. Figures only: nothing is asserted.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// options are the command line.
type options struct {
	tag       string
	outDir    string
	stateDir  string
	window    time.Duration
	timeout   time.Duration
	steps     int
	sections  string
	tuned     bool
	scrape    time.Duration
	adapter   string
	rampIn    time.Duration
	ramps     int
	rampEvery time.Duration
}

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	root := framework.RepoRoot()
	var o options
	fs := flag.NewFlagSet("nodebench", flag.ContinueOnError)
	fs.StringVar(&o.tag, "tag", os.Getenv("IMAGE_TAG"), "tag of the podpilot image (make images) to install (also IMAGE_TAG)")
	fs.StringVar(&o.outDir, "out", filepath.Join(root, "bench", "results"), "directory of the report")
	fs.StringVar(&o.stateDir, "state-dir", filepath.Join(root, "_output", "bench-node-cluster"), "state directory of the cluster")
	fs.DurationVar(&o.window, "window", 90*time.Second, "length of each idle or busy measurement")
	fs.DurationVar(&o.timeout, "timeout", 75*time.Minute, "bound on the whole run")
	fs.IntVar(&o.steps, "steps", 5, "load steps per step section, spread over the sync phase")
	fs.StringVar(&o.sections, "sections", "image,cpu,custom", "comma-separated sections: image, cpu, custom (load steps), predict (a daily ramp, ScaleOut), or footprint, utilization (podpilot serving metrics.k8s.io; not with cpu or custom)")
	fs.BoolVar(&o.tuned, "tuned", false, "both autoscalers' sync period at 5s instead of their defaults (15s); the report is named …-tuned.md")
	fs.DurationVar(&o.scrape, "scrape-interval", 15*time.Second, "Prometheus' scrape interval (15s: its example configuration's, and what podpilot's rules recommend)")
	fs.DurationVar(&o.rampIn, "ramp-in", 7*time.Minute, "predict: the daily ramp starts this long after the section starts (backfill, fit and the lead time come before)")
	fs.IntVar(&o.ramps, "ramps", 1, "predict: how many daily ramps (each at its own time of day in the history)")
	fs.DurationVar(&o.rampEvery, "ramp-every", 6*time.Minute, "predict: time between two ramps' starts")
	fs.StringVar(&o.adapter, "prometheus-adapter", os.Getenv("PROMETHEUS_ADAPTER"), "the prometheus-adapter binary for the custom section (hack/build-tools.sh prometheus-adapter; also PROMETHEUS_ADAPTER)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.tag == "" {
		fmt.Fprintln(os.Stderr, "nodebench: --tag (or IMAGE_TAG) is required")
		return 2
	}
	rest.SetDefaultWarningHandler(rest.NoWarnings{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	path, err := bench(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "nodebench:", err)
		return 1
	}
	fmt.Printf("\nreport: %s\n", path)
	return 0
}

// bench starts the cluster, installs podpilot, runs every section and
// writes the report.
func bench(ctx context.Context, o options) (string, error) {
	begin := time.Now()
	// The report is named after the commit the run started at (the image's),
	// whatever is committed while it runs.
	sha, _ := exec.Command("git", "-C", framework.RepoRoot(), "rev-parse", "--short", "HEAD").Output()
	sections, legacy, err := parseSections(o.sections)
	if err != nil {
		return "", err
	}
	_ = os.RemoveAll(o.stateDir)
	sync, clusterEnv, install, podpilot := setup(o, legacy)
	c, err := framework.UpRealNodeWith(ctx, o.stateDir, "", clusterEnv)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Down(context.Background()) }()
	e := &env{c: c, o: o, sync: sync, images: filepath.Join(framework.RepoRoot(), "_output", "images")}
	if err := e.install(ctx, install, sections["cpu"] || sections["custom"] || sections["predict"]); err != nil {
		return "", err
	}
	r := newReport(o, c, podpilot, legacy)
	for _, s := range e.sections(ctx, sections) {
		r.Sections = append(r.Sections, s)
		r.Summary = append(r.Summary, s.Headline...)
	}
	if n, err := c.GuardPackets(ctx); err != nil || n != 0 {
		r.Summary = append(r.Summary, fmt.Sprintf("GUARDS: %d packets would have left the machine (%v)", n, err))
	}
	r.Settings = append(r.Settings, report.KV{Key: "wall time of the run", Value: time.Since(begin).Round(time.Second).String()})
	fmt.Print(r.Text())
	suffix := ""
	if o.tuned {
		suffix = "-tuned"
	} else if legacy {
		suffix = "-podpilot-metrics"
	}
	return write(o.outDir, strings.TrimSpace(string(sha))+suffix, r)
}

// parseSections reads --sections; legacy is a run of the sections that need
// podpilot serving metrics.k8s.io, which cannot share a run with the others.
func parseSections(list string) (sections map[string]bool, legacy bool, err error) {
	sections = map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		sections[strings.TrimSpace(name)] = true
	}
	legacy = sections["footprint"] || sections["utilization"]
	if legacy && (sections["cpu"] || sections["custom"] || sections["predict"]) {
		return nil, false, fmt.Errorf("--sections: footprint and utilization install podpilot serving metrics.k8s.io, cpu and custom at the defaults beside metrics-server: run them apart")
	}
	return sections, legacy, nil
}

// install loads podpilot's image and installs its chart, and with workloads
// the workload image and its namespace.
func (e *env) install(ctx context.Context, install framework.ChartInstall, workloads bool) error {
	if err := e.c.ImportImage(ctx, filepath.Join(e.images, "podpilot.tar")); err != nil {
		return err
	}
	if err := e.c.InstallChart(ctx, install); err != nil {
		return err
	}
	if !workloads {
		return nil
	}
	if err := e.c.ImportImage(ctx, filepath.Join(e.images, "workload.tar")); err != nil {
		return err
	}
	_, err := e.c.ApplyErr(ctx, "", []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: "+loadNamespace+"}\n"), false)
	return err
}

// newReport is the run's report with its machine and settings.
func newReport(o options, c *framework.Cluster, podpilot string, legacy bool) report.Report {
	r := report.Report{Title: "podpilot on the real node", Machine: machine(), Settings: []report.KV{
		{Key: "image tag", Value: o.tag}, {Key: "podpilot", Value: podpilot},
		{Key: "kube-controller-manager HPA", Value: hpaSettings(c)},
		{Key: "Prometheus scrape interval", Value: o.scrape.String() + " (the pods; the kubelet's cAdvisor every 5s)"},
	}}
	if legacy {
		r.Settings = append(r.Settings, report.KV{Key: "window", Value: o.window.String()})
		return r
	}
	r.Settings = append(r.Settings, report.KV{Key: "steps per section", Value: fmt.Sprint(o.steps)})
	if o.tuned {
		r.Title += ": TUNED, both sync periods 5s"
	} else {
		r.Title += ": at the defaults users run"
	}
	return r
}

// setup is how a run starts the cluster and installs podpilot: both
// autoscalers' sync period, hack/local-up.sh's environment, the chart
// install and its description for the report.
func setup(o options, legacy bool) (time.Duration, []string, framework.ChartInstall, string) {
	if legacy {
		return 5 * time.Second, nil, framework.ChartInstall{Tag: o.tag, ExtraArgs: []string{"--autoscaler-sync-period=5s"}},
			"2 replicas from charts/podpilot serving metrics.k8s.io from cAdvisor (resourceRules), --autoscaler-sync-period=5s (the HPA controller's too), requests 100m/128Mi"
	}
	sync := 15 * time.Second // both autoscalers' default
	clusterEnv := []string{"HPA_SYNC_PERIOD=15s", "HPA_DOWNSCALE_STABILIZATION=5m", "PROMETHEUS_SCRAPE_INTERVAL=" + o.scrape.String()}
	install := framework.ChartInstall{Tag: o.tag, AtDefaults: true, Values: map[string]any{
		"apiServices": map[string]any{"custom": map[string]any{"enabled": false}, "external": map[string]any{"enabled": true}},
	}}
	podpilot := "2 replicas from charts/podpilot at its defaults (built-in rules, no metrics.k8s.io, sync period 15s), custom APIService off (prometheus-adapter's), requests 100m/128Mi"
	if o.tuned {
		sync, clusterEnv[0] = 5*time.Second, "HPA_SYNC_PERIOD=5s"
		install.ExtraArgs = []string{"--autoscaler-sync-period=5s"}
		podpilot = strings.Replace(podpilot, "sync period 15s", "TUNED: --autoscaler-sync-period=5s", 1)
	}
	return sync, clusterEnv, install, podpilot
}

// sections runs the selected sections in order; a failed one is reported
// in its notes and the others still run.
func (e *env) sections(ctx context.Context, selected map[string]bool) []report.Section {
	var out []report.Section
	stops := []func(){}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	type section struct {
		name  string
		start func(context.Context) (func(), error)
		run   func(context.Context) (report.Section, error)
	}
	all := []section{
		{name: "image", run: e.image},
		{name: "footprint", run: e.footprint},
		{name: "utilization", run: e.utilization},
		{name: "cpu", start: e.startMetricsServer, run: func(ctx context.Context) (report.Section, error) { return e.loadSteps(ctx, e.cpuKind()) }},
		{name: "custom", start: e.startPrometheusAdapter, run: func(ctx context.Context) (report.Section, error) { return e.loadSteps(ctx, e.customKind()) }},
		{name: "predict", start: e.startPrometheusAdapter, run: e.predict},
	}
	for _, s := range all {
		if !selected[s.name] {
			continue
		}
		var sec report.Section
		var err error
		if s.start != nil {
			var stop func()
			stop, err = s.start(ctx)
			stops = append(stops, stop)
		}
		if err == nil {
			sec, err = s.run(ctx)
		}
		if err != nil {
			if sec.Title == "" {
				sec.Title = s.name
			}
			sec.Notes = append(sec.Notes, "failed: "+err.Error())
			sec.Headline = append(sec.Headline, s.name+": failed: "+err.Error())
			fmt.Fprintf(os.Stderr, "nodebench: %s: %v\n", sec.Title, err)
		}
		out = append(out, sec)
	}
	return out
}

// hpaSettings describes the running kube-controller-manager's HPA flags.
func hpaSettings(c *framework.Cluster) string {
	s, err := c.HPAController()
	if err != nil {
		return "unknown: " + err.Error()
	}
	return fmt.Sprintf("sync period %s, tolerance %g, downscale stabilization %s, cpu initialization %s, initial readiness delay %s (read from its command line)",
		s.SyncPeriod, s.Tolerance, s.DownscaleStabilization, s.CPUInitializationPeriod, s.InitialReadinessDelay)
}

func write(dir, name string, r report.Report) (string, error) {
	path := filepath.Join(dir, fmt.Sprintf("node-%s-%s.md", time.Now().Format("2006-01-02"), name))
	if err := os.WriteFile(path, []byte(r.Markdown()), 0o644); err != nil {
		return "", fmt.Errorf("write report: %w", err)
	}
	return path, nil
}

func machine() []report.KV {
	kernel, _ := exec.Command("uname", "-r").Output()
	return []report.KV{
		{Key: "cores", Value: fmt.Sprint(numCPU())},
		{Key: "kernel", Value: strings.TrimSpace(string(kernel))},
		{Key: "node", Value: "kubelet v1.36.3, containerd 1.6.20, runc 1.1.5, cgroup v1"},
	}
}
