package scenario

import (
	"context"
	"fmt"
	"time"

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/bench/internal/procstat"
	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
)

const extraNamespace = benchNSPrefix + "extra"

// memoryLevel is the RSS at one number of extra series.
type memoryLevel struct {
	series   int
	podpilot peakRSS
	// baselines are the prometheus-adapters' samples, in memoryBaseline order.
	baselines      []peakRSS
	discoveryMeanS float64
	served         float64
}

// peakRSS is the highest RSS seen, with that sample's file-backed part
// (RssFile, the binary's pages), in MiB.
type peakRSS struct{ mib, fileMiB float64 }

// memoryBaseline is a prometheus-adapter measured beside podpilot.
type memoryBaseline struct {
	name string
	proc *framework.Podpilot
}

// Memory runs scenario e: podpilot's steady RSS (the highest of samples
// taken every second over one relist interval once discovery has seen the
// series) with each of MemorySeries extra per-pod series spread over
// MetricNames metric names, and prometheus-adapter's beside it when given.
func (e *Env) Memory(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "e. Memory against Prometheus' size",
		Intro: fmt.Sprintf("Extra gauges `bench_extra_NNNN{namespace=%q,pod=...}` over %d metric names, served by a second exporter and "+
			"discovered through the default (catch-all) rules. RSS is the maximum of 1 s samples of /proc/<pid>/status VmRSS over one "+
			"relist interval (%s) after discovery has seen the series; \"file-backed\" is that sample's RssFile, the pages of the binary "+
			"mapped from the page cache (clean, shared, reclaimable), the rest is RssAnon (heap, stacks, Go runtime).", extraNamespace, e.Cfg.MetricNames, e.Cfg.RelistInterval)}
	exp, err := exporter.Serve(clock.RealClock{})
	if err != nil {
		return sec, err
	}
	defer func() { _ = exp.Close() }() // the run is over; a close error changes no figure
	if err := exp.RegisterTarget(e.Cluster.TargetsDir, "bench-extra"); err != nil {
		return sec, err
	}
	// Like for like: podpilot starts afresh (same flags) together with
	// prometheus-adapter, so neither has served the earlier scenarios' load.
	before, err := e.restartPodpilot(ctx)
	if err != nil {
		return sec, err
	}
	sec.Notes = append(sec.Notes, fmt.Sprintf("podpilot was restarted with the same flags when this scenario started prometheus-adapter, "+
		"so both are measured from the same start; the podpilot that ran the earlier scenarios had %s MiB RSS when it was stopped.",
		stats.Num(before, 1)))
	baselines, stop, err := e.memoryBaselines(ctx, &sec)
	defer stop()
	if err != nil {
		return sec, err
	}
	var levels []memoryLevel
	set := 0
	for _, n := range e.Cfg.MemorySeries {
		set = e.setExtraSeries(exp.Exporter, set, n)
		e.logf("e: %d extra series", n)
		l, err := e.measureMemory(ctx, n, baselines)
		if err != nil {
			return sec, err
		}
		levels = append(levels, l)
	}
	sec.Tables = append(sec.Tables, memoryTable(levels, baselines))
	if len(levels) > 1 {
		a, b := levels[0], levels[len(levels)-1]
		sec.Headline = []string{fmt.Sprintf("e. podpilot RSS %s MiB at %d extra series, %s MiB at %d (%s)",
			stats.Num(a.podpilot.mib, 0), a.series, stats.Num(b.podpilot.mib, 0), b.series, stats.Ratio(b.podpilot.mib, a.podpilot.mib))}
	}
	return sec, nil
}

// memoryBaselines starts the prometheus-adapters the config names (notes in
// sec say which were skipped) and returns them with a func that stops them.
func (e *Env) memoryBaselines(ctx context.Context, sec *report.Section) ([]memoryBaseline, func(), error) {
	var started []memoryBaseline
	stop := func() {
		for _, b := range started {
			b.proc.Stop()
		}
	}
	for _, c := range []struct{ name, binary, certs, env string }{
		{"prometheus-adapter", e.Cfg.Adapter, "adapter-certs", "PROMETHEUS_ADAPTER"},
		{"prometheus-adapter on podpilot's libraries", e.Cfg.AdapterCurrent, "adapter-current-certs", "PROMETHEUS_ADAPTER_CURRENT"},
	} {
		if c.binary == "" {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: skipped (%s not set).", c.name, c.env))
			continue
		}
		p, err := e.startAdapterBinary(ctx, c.binary, c.certs, adapterClientQPS)
		if err != nil {
			return started, stop, fmt.Errorf("%s: %w", c.name, err)
		}
		started = append(started, memoryBaseline{name: c.name, proc: p})
	}
	if e.Cfg.AdapterCurrent != "" {
		sec.Notes = append(sec.Notes, "prometheus-adapter on podpilot's libraries is prometheus-adapter v0.12.0's own code built on the "+
			"k8s.io and custom-metrics-apiserver versions of podpilot's go.mod (hack/build-tools.sh prometheus-adapter-current, "+
			"hack/tools/prometheus-adapter-current): beside the released adapter it separates what the libraries' versions cost from what "+
			"each design costs.")
	}
	return started, stop, nil
}

// restartPodpilot stops the bench's podpilot, starts a fresh one with the same
// flags, points the APIServices at it and returns the old one's RSS in MiB.
func (e *Env) restartPodpilot(ctx context.Context) (float64, error) {
	before := float64(e.PodpilotRSS()) / (1 << 20)
	e.Podpilot.Stop()
	p, err := e.startMetricsServer(ctx, e.Cfg.PodpilotBinary, e.podpilotArgs())
	if err != nil {
		return before, fmt.Errorf("restart podpilot: %w", err)
	}
	e.Podpilot = p
	if err := e.Cluster.RegisterSomeMetricsAPIs(ctx, p.Port, customAPIs...); err != nil {
		return before, fmt.Errorf("point the APIServices at the restarted podpilot: %w", err)
	}
	return before, nil
}

// setExtraSeries grows the extra series from have to want (ascending levels).
func (e *Env) setExtraSeries(exp *exporter.Exporter, have, want int) int {
	names := max(e.Cfg.MetricNames, 1)
	for i := have; i < want; i++ {
		exp.SetGauge(fmt.Sprintf("bench_extra_%04d", i%names),
			map[string]string{"namespace": extraNamespace, "pod": fmt.Sprintf("p-%06d", i/names)}, 1)
	}
	return max(have, want)
}

func (e *Env) measureMemory(ctx context.Context, n int, baselines []memoryBaseline) (memoryLevel, error) {
	l := memoryLevel{series: n, baselines: make([]peakRSS, len(baselines))}
	if err := e.waitExtraSeries(ctx, n); err != nil {
		return l, err
	}
	want := min(n, e.Cfg.MetricNames)
	// Discovery has seen the series once podpilot serves at least the extra names.
	err := framework.PollEvery(ctx, time.Second, 4*e.Cfg.RelistInterval+2*e.Cfg.ScrapeInterval+time.Minute, fmt.Sprintf("discovery of %d extra series", n),
		func(ctx context.Context) (bool, string, error) {
			f, err := e.Metrics(ctx, "podpilot")
			if err != nil {
				return false, "", err
			}
			l.served = f.Sum("podpilot_metrics_discovery_metrics", map[string]string{"api": "custom"})
			return int(l.served) >= want, fmt.Sprintf("%.0f custom metrics served", l.served), nil
		})
	if err != nil {
		return l, err
	}
	s0, err := e.Metrics(ctx, "podpilot")
	if err != nil {
		return l, err
	}
	pids := make([]int, len(baselines))
	for i, b := range baselines {
		pids[i], _ = e.Pid(b.proc)
	}
	podpilotPid, _ := e.Pid(e.Podpilot)
	deadline := time.Now().Add(e.Cfg.RelistInterval)
	for time.Now().Before(deadline) {
		l.podpilot.raise(podpilotPid)
		for i, pid := range pids {
			l.baselines[i].raise(pid)
		}
		if err := sleep(ctx, time.Second); err != nil {
			return l, err
		}
	}
	s1, err := e.Metrics(ctx, "podpilot")
	if err != nil {
		return l, err
	}
	l.discoveryMeanS, _ = histogramMean(s1, s0, "podpilot_metrics_discovery_duration_seconds")
	return l, nil
}

// waitExtraSeries waits until Prometheus holds n extra series and then one
// relist interval, so that every server's discovery has listed them all: at
// more series than metric names the served names no longer tell.
func (e *Env) waitExtraSeries(ctx context.Context, n int) error {
	if n == 0 {
		return nil
	}
	query := fmt.Sprintf("count({namespace=%q})", extraNamespace)
	err := framework.PollEvery(ctx, time.Second, 2*e.Cfg.ScrapeInterval+time.Minute, fmt.Sprintf("Prometheus holding %d extra series", n),
		func(ctx context.Context) (bool, string, error) {
			v, err := e.promScalar(ctx, query)
			if err != nil {
				return false, err.Error(), nil // no series yet is an empty answer
			}
			return int(v) >= n, fmt.Sprintf("%.0f extra series", v), nil
		})
	if err != nil {
		return err
	}
	return sleep(ctx, e.Cfg.RelistInterval)
}

// raise takes pid's current RSS when it is higher than the sample's, with
// that reading's file-backed part.
func (s *peakRSS) raise(pid int) {
	if pid == 0 {
		return
	}
	r, err := procstat.RSS(pid)
	if err != nil || float64(r)/(1<<20) <= s.mib {
		return
	}
	f, _ := procstat.RSSFile(pid)
	s.mib, s.fileMiB = float64(r)/(1<<20), float64(f)/(1<<20)
}

func memoryTable(levels []memoryLevel, baselines []memoryBaseline) report.Table {
	t := report.Table{Header: []string{"extra series", "custom metrics served", "podpilot RSS MiB", "of which file-backed MiB", "× at 0",
		"growth MiB", "discovery pass s"}}
	for _, b := range baselines {
		t.Header = append(t.Header, b.name+" RSS MiB", "of which file-backed MiB", "podpilot × it", "its growth MiB",
			"podpilot growth × its growth")
	}
	if len(levels) == 0 {
		return t
	}
	base := levels[0]
	for _, l := range levels {
		p := l.podpilot
		row := []string{fmt.Sprint(l.series), stats.Num(l.served, 0), stats.Num(p.mib, 1), stats.Num(p.fileMiB, 1),
			stats.Ratio(p.mib, base.podpilot.mib), stats.Num(p.mib-base.podpilot.mib, 1), stats.Num(l.discoveryMeanS, 3)}
		for i, b := range l.baselines {
			b0 := base.baselines[i]
			row = append(row, stats.Num(b.mib, 1), stats.Num(b.fileMiB, 1), stats.Ratio(p.mib, b.mib), stats.Num(b.mib-b0.mib, 1),
				stats.Ratio(p.mib-base.podpilot.mib, b.mib-b0.mib))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
