package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/podpilot/podpilot/bench/internal/scenario"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// options are the command line.
type options struct {
	cfg       scenario.Config
	outDir    string
	benchtime string
	timeout   time.Duration
	args      []string
}

func parseFlags(args []string) (options, error) {
	root := framework.RepoRoot()
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var o options
	var sizes, series, pods, scenarios, ppArgs string
	var full bool
	c := &o.cfg
	fs.StringVar(&sizes, "sizes", "100", "comma-separated N for scenarios b and c (N HPAs, then N PodAutoscalers, over N Deployments of 2 pods)")
	fs.IntVar(&c.PodsPerTarget, "pods-per-target", 2, "pods of each of scenario b and c's N Deployments before the step (kubernetes#139142's shape is 100)")
	fs.IntVar(&c.StepTo, "step-to", 300, "scenario c's step: the per-pod load (from 100, the target) every Deployment steps to")
	fs.IntVar(&c.Shards, "shards", 6, "scenario s's --autoscaler-shards: buckets over its 3 sharded podpilots")
	fs.BoolVar(&full, "full", false, "the full run: --sizes=100,1000,5000 --memory-series=0,10000,100000 --pods=1000,10000,50000 (hours on 2 cores)")
	fs.IntVar(&c.Namespaces, "namespaces", 10, "namespaces the N Deployments are spread over")
	fs.IntVar(&c.Rounds, "rounds", 2, "sync periods per steady-state window")
	fs.IntVar(&c.APIPods, "api-pods", 100, "pods behind pods/* in scenario a")
	fs.IntVar(&c.APIConcurrency, "api-concurrency", 8, "concurrent clients in scenario a")
	fs.DurationVar(&c.APIDuration, "api-duration", 15*time.Second, "measured load per target in scenario a")
	fs.IntVar(&c.ReactSteps, "react-steps", 10, "staggered steps per autoscaler kind in scenario d")
	fs.StringVar(&series, "memory-series", "0,10000", "comma-separated extra Prometheus series for scenario e, ascending")
	fs.IntVar(&c.StockHPAMax, "stock-hpa-max", 0, "largest N at which scenario c also runs the stock HPA (0: every N); above it, PodAutoscalers only")
	fs.IntVar(&c.KCMQPS, "kcm-qps", 20, "kube-controller-manager's --kube-api-qps (its default: 20); its HPA controller and the pod creation run within it")
	fs.IntVar(&c.KCMBurst, "kcm-burst", 30, "kube-controller-manager's --kube-api-burst (its default: 30)")
	fs.StringVar(&pods, "pods", "1000,5000", "comma-separated pod counts for scenario g, ascending (level 0 is always measured)")
	fs.StringVar(&c.PodShape, "pod-shape", scenario.PodShapeRealistic, "scenario g's pods: realistic (two containers with env, probes, volumes; annotations) or minimal (one container with requests)")
	fs.IntVar(&c.MetricNames, "metric-names", 1000, "metric names the extra series of scenario e are spread over")
	fs.DurationVar(&c.ScrapeInterval, "scrape-interval", 15*time.Second, "Prometheus scrape interval")
	fs.DurationVar(&c.SyncPeriod, "sync-period", 15*time.Second, "kube-controller-manager's HPA and podpilot's autoscaler sync period")
	fs.DurationVar(&c.RelistInterval, "relist-interval", 15*time.Second, "podpilot's (and prometheus-adapter's) --metrics-relist-interval")
	fs.StringVar(&ppArgs, "podpilot-args", os.Getenv("BENCH_PODPILOT_ARGS"), "extra podpilot flags, space-separated (also BENCH_PODPILOT_ARGS), e.g. '--kube-api-qps=50'")
	fs.StringVar(&c.Adapter, "prometheus-adapter", os.Getenv("PROMETHEUS_ADAPTER"), "a prometheus-adapter binary to measure side by side (also PROMETHEUS_ADAPTER)")
	fs.StringVar(&c.AdapterCurrent, "prometheus-adapter-current", os.Getenv("PROMETHEUS_ADAPTER_CURRENT"),
		"scenario e: prometheus-adapter's code built on podpilot's library versions (hack/build-tools.sh prometheus-adapter-current; also PROMETHEUS_ADAPTER_CURRENT)")
	fs.StringVar(&c.PodpilotBinary, "podpilot", filepath.Join(root, "bin", "podpilot"), "the podpilot binary")
	fs.StringVar(&c.PodcacheBinary, "podcache", filepath.Join(root, "_output", "bin", "podcache"), "where scenario g builds bench/cmd/podcache, its typed-informer baseline")
	fs.StringVar(&scenarios, "scenarios", "a,b,c,d,e,f,p", "scenarios to run (b and c run together; g, memory against pods, on request or with --full; s, the autoscaler sharded over 3 replicas at the largest of --sizes, on request; p, predictive scaling in replay, needs no cluster)")
	fs.StringVar(&c.StateDir, "state-dir", filepath.Join(root, "_output", "bench-cluster"), "state directory of the bench's local control plane")
	fs.StringVar(&c.ClusterEnv, "cluster-env", "", "the env file of a running local cluster to use and leave running (hack/local-up.sh's; its kwok node, kube-controller-manager and Prometheus settings are the ones it was started with), instead of starting one in --state-dir")
	fs.StringVar(&o.outDir, "out", filepath.Join(root, "bench", "results"), "directory of the report and its plots")
	fs.StringVar(&o.benchtime, "benchtime", "1s", "-benchtime of the Go benchmarks (scenario f)")
	fs.DurationVar(&o.timeout, "timeout", 0, "bound on the whole run (0: 20m, or 6h with --full)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o.args = args
	if full {
		sizes, series, pods, scenarios = fullRun(fs, scenarios)
	}
	var err error
	if c.Sizes, err = ints(sizes); err != nil {
		return o, fmt.Errorf("--sizes: %w", err)
	}
	if c.MemorySeries, err = ints(series); err != nil {
		return o, fmt.Errorf("--memory-series: %w", err)
	}
	if c.Pods, err = ints(pods); err != nil {
		return o, fmt.Errorf("--pods: %w", err)
	}
	c.PodpilotArgs = strings.Fields(ppArgs)
	c.Scenarios = map[string]bool{}
	for _, s := range strings.Split(scenarios, ",") {
		c.Scenarios[strings.TrimSpace(s)] = true
	}
	if o.timeout == 0 {
		o.timeout = defaultTimeout(*c, full)
	}
	return o, validate(*c)
}

// validate checks the settings that have a range.
func validate(c scenario.Config) error {
	if c.Namespaces < 1 || c.Rounds < 1 || c.APIPods < 1 || c.APIConcurrency < 1 || c.ReactSteps < 1 || c.PodsPerTarget < 1 {
		return fmt.Errorf("--namespaces, --rounds, --api-pods, --api-concurrency, --react-steps and --pods-per-target must be at least 1")
	}
	if c.Shards < 2 || c.Shards > 64 {
		return fmt.Errorf("--shards=%d: scenario s needs 2 to 64 buckets (podpilot's --autoscaler-shards range above 1)", c.Shards)
	}
	if c.StepTo <= 110 {
		return fmt.Errorf("--step-to=%d: the step must leave the target's 10%% tolerance (more than 110 per pod)", c.StepTo)
	}
	if c.PodShape != scenario.PodShapeRealistic && c.PodShape != scenario.PodShapeMinimal {
		return fmt.Errorf("--pod-shape: %q is neither %s nor %s", c.PodShape, scenario.PodShapeRealistic, scenario.PodShapeMinimal)
	}
	return nil
}

// defaultTimeout bounds a run: 20 minutes (6 hours with --full) plus
// scenario g's pods, which kube-controller-manager creates at 20/s, and scenario p's replays.
func defaultTimeout(c scenario.Config, full bool) time.Duration {
	d := 20 * time.Minute
	if full {
		d = 6 * time.Hour
	}
	if c.Scenarios["b"] || c.Scenarios["c"] {
		// Creating, resetting and stepping N Deployments at kube-controller-manager's 20 QPS,
		// and their pods (two per Deployment are counted above).
		for _, n := range c.Sizes {
			d += time.Duration(n) * 1500 * time.Millisecond
			if c.PodsPerTarget > 2 {
				d += time.Duration(n*(c.PodsPerTarget-2)) * 100 * time.Millisecond
			}
		}
	}
	if c.Scenarios["g"] && len(c.Pods) > 0 {
		d += time.Duration(c.Pods[len(c.Pods)-1]) * 120 * time.Millisecond
	}
	if c.Scenarios["p"] {
		// Scenario p replays 26 days at 15 s (12 single days, the two-week holiday trace, five
		// spike seeds), each refitting the forecast every 5 minutes: 33m33s in all on 2 shared
		// cores at a load average of 8 to 12, where the default 20 minutes cut it short.
		d += 40 * time.Minute
	}
	if c.Scenarios["s"] && len(c.Sizes) > 0 {
		// Three steps and their pods (at about 9 pods/s), resets, a takeover
		// and a rolling restart.
		n := c.Sizes[len(c.Sizes)-1]
		d += 10*time.Minute + time.Duration(n)*4*time.Second +
			time.Duration(n*scenario.ShardPods(c.StepTo, c.PodsPerTarget))*150*time.Millisecond
	}
	if c.Scenarios["a"] {
		// Two request mixes × up to nine targets, each measured for APIDuration
		// after a 2 s warm-up and an APIService re-route of a few seconds.
		d += 2 * 9 * (c.APIDuration + 5*time.Second)
	}
	return d
}

// ints parses a comma-separated ascending list of non-negative integers.
func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a non-negative integer", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return nil, fmt.Errorf("%q: sizes must ascend", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// fullRun returns the sizes of --full, and the scenarios with g added unless --scenarios was given.
func fullRun(fs *flag.FlagSet, scenarios string) (sizes, series, pods, withG string) {
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "scenarios" })
	if !explicit {
		scenarios += ",g"
	}
	return "100,1000,5000", "0,10000,100000", "1000,10000,50000", scenarios
}
