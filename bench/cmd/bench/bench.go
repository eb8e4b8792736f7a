package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/podpilot/podpilot/bench/internal/gobench"
	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/scenario"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// benchmark runs the scenarios, writes the report and returns its path and
// whether a scenario failed.
func benchmark(ctx context.Context, o options) (string, bool, error) {
	start := time.Now()
	sha := gitShortSHA()
	base := start.UTC().Format("2006-01-02") + "-" + sha
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return "", false, fmt.Errorf("create %s: %w", o.outDir, err)
	}
	if _, err := os.Stat(o.cfg.PodpilotBinary); err != nil {
		return "", false, fmt.Errorf("podpilot binary (run `make build`): %w", err)
	}
	r := report.Report{Title: fmt.Sprintf("podpilot bench %s (%s)", start.UTC().Format("2006-01-02 15:04 UTC"), sha)}
	var failures []string
	if needsCluster(o.cfg.Scenarios) {
		secs, errs := clusterScenarios(ctx, o, base)
		r.Sections = append(r.Sections, secs...)
		failures = append(failures, errs...)
	}
	if o.cfg.Scenarios["p"] {
		sec, err := scenario.Predict(ctx, o.outDir, base)
		if err != nil {
			failures = append(failures, "p: "+err.Error())
			sec.Notes = append(sec.Notes, "**FAILED**: "+err.Error())
		}
		r.Sections = append(r.Sections, sec)
	}
	if o.cfg.Scenarios["f"] {
		sec, err := goBenchmarks(ctx, o.benchtime)
		if err != nil {
			failures = append(failures, "f: "+err.Error())
		}
		r.Sections = append(r.Sections, sec)
	}
	took := time.Since(start).Round(time.Second)
	r.Summary = append(r.Summary, fmt.Sprintf("Command: `make bench BENCH_FLAGS='%s'` (took %s). Every ratio (×) is against the baseline named in its column, measured in the same run.",
		strings.Join(o.args, " "), took))
	for _, f := range failures {
		r.Summary = append(r.Summary, "\n**FAILED** "+f)
	}
	r.Machine = machine()
	r.Settings = settings(o)
	path := filepath.Join(o.outDir, base+".md")
	if err := os.WriteFile(path, []byte(r.Markdown()), 0o644); err != nil {
		return "", false, fmt.Errorf("write report: %w", err)
	}
	fmt.Print("\n" + r.Text())
	fmt.Printf("\ntook %s\n", took)
	return path, len(failures) > 0, nil
}

func needsCluster(s map[string]bool) bool {
	return s["a"] || s["b"] || s["c"] || s["d"] || s["e"] || s["g"] || s["s"]
}

// clusterScenarios runs a–e, g and s on one local control plane; a failed scenario
// becomes a section saying so, and the next one still runs.
func clusterScenarios(ctx context.Context, o options, base string) ([]report.Section, []string) {
	cfg := o.cfg
	var buildErr error
	if cfg.Scenarios["g"] {
		buildErr = scenario.BuildPodcache(ctx, cfg.PodcacheBinary)
	}
	env, err := scenario.Start(ctx, cfg, kwokPods(cfg), os.Stderr, o.outDir, base)
	if err != nil {
		return []report.Section{failed("cluster", err)}, []string{"cluster: " + err.Error()}
	}
	defer func() {
		if err := env.Stop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(os.Stderr, "bench: stop cluster:", err)
		}
	}()
	var secs []report.Section
	var errs []string
	add := func(name string, sec report.Section, err error) {
		if err != nil {
			errs = append(errs, name+": "+err.Error())
			sec.Notes = append(sec.Notes, "**FAILED**: "+err.Error())
		}
		secs = append(secs, sec)
	}
	if cfg.Scenarios["a"] {
		sec, err := env.API(ctx)
		add("a", sec, err)
	}
	var bySize map[int][]scenario.Phase
	if cfg.Scenarios["b"] || cfg.Scenarios["c"] {
		var scale []report.Section
		var err error
		bySize, scale, err = scaleScenarios(ctx, env)
		if err != nil {
			errs = append(errs, "b/c: "+err.Error())
		}
		secs = append(secs, scale...)
	}
	if cfg.Scenarios["s"] && len(cfg.Sizes) > 0 {
		run, err := env.Shards(ctx, cfg.Sizes[len(cfg.Sizes)-1])
		add("s", env.ShardSection(run, bySize), err)
	}
	if cfg.Scenarios["d"] {
		sec, err := env.React(ctx)
		add("d", sec, err)
	}
	if cfg.Scenarios["e"] {
		sec, err := env.Memory(ctx)
		add("e", sec, err)
	}
	if cfg.Scenarios["g"] {
		if buildErr != nil {
			add("g", report.Section{Title: "g. Memory against the number of pods"}, buildErr)
		} else {
			sec, err := env.PodMemory(ctx)
			add("g", sec, err)
		}
	}
	return secs, errs
}

// scaleScenarios runs b and c at every size and renders them, the last
// section noting a failure; the phases are scenario s's comparison.
func scaleScenarios(ctx context.Context, env *scenario.Env) (map[int][]scenario.Phase, []report.Section, error) {
	bySize, err := env.ScaleAll(ctx)
	scale, rerr := env.ScaleSections(bySize)
	if err == nil {
		err = rerr
	}
	if err != nil && len(scale) > 0 {
		scale[len(scale)-1].Notes = append(scale[len(scale)-1].Notes, "**FAILED**: "+err.Error())
	}
	return bySize, scale, err
}

// kwokPods is the kwok node's pod capacity: every pod the scenarios create.
func kwokPods(cfg scenario.Config) int {
	maxN := 0
	for _, n := range cfg.Sizes {
		maxN = max(maxN, n)
	}
	// Scenario b and c's autoscalers may grow each Deployment to 4 × its pods;
	// scenario d: 2 → 6 pods per step.
	n := maxN*4*max(2, cfg.PodsPerTarget) + cfg.APIPods + cfg.ReactSteps*scenario.ReactRows*6 + 500
	if cfg.Scenarios["g"] && len(cfg.Pods) > 0 {
		n += cfg.Pods[len(cfg.Pods)-1]
	}
	if cfg.Scenarios["s"] {
		// Scenario s's last step asks for ShardPods per Deployment.
		n += maxN * scenario.ShardPods(cfg.StepTo, max(1, cfg.PodsPerTarget))
	}
	return n
}

func failed(what string, err error) report.Section {
	return report.Section{Title: what, Notes: []string{"**FAILED**: " + err.Error()}}
}

// goBenchmarks runs scenario f.
func goBenchmarks(ctx context.Context, benchtime string) (report.Section, error) {
	root := framework.RepoRoot()
	sec := report.Section{Title: "f. Go micro-benchmarks",
		Intro: fmt.Sprintf("`go test -run '^$' -bench . -benchmem -benchtime %s` over every package whose tests declare a Benchmark "+
			"(found with a search of *_test.go, so new ones are picked up), run after the cluster is down.", benchtime)}
	pkgs, err := gobench.Discover(root)
	if err != nil {
		return sec, err
	}
	if len(pkgs) == 0 {
		sec.Notes = append(sec.Notes, "No package declares a Benchmark function yet.")
		return sec, nil
	}
	fmt.Fprintf(os.Stderr, "bench: f: go test -bench over %s\n", strings.Join(pkgs, " "))
	res, out, err := gobench.Run(ctx, root, benchtime, pkgs)
	t := report.Table{Header: []string{"package", "benchmark", "ns/op", "B/op", "allocs/op"}}
	for _, b := range res {
		t.Rows = append(t.Rows, []string{strings.TrimPrefix(b.Package, "github.com/podpilot/podpilot/"), b.Name,
			stats.Num(b.Values["ns/op"], 0), stats.Num(b.Values["B/op"], 0), stats.Num(b.Values["allocs/op"], 0)})
	}
	sec.Tables = append(sec.Tables, t)
	if err != nil {
		sec.Notes = append(sec.Notes, "**FAILED**: "+err.Error()+"; output tail:\n\n```\n"+tail(out, 2000)+"\n```")
	}
	return sec, err
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
