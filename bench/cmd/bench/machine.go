package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// machine describes the host: CPU model, cores, memory, Go, kernel.
func machine() []report.KV {
	return []report.KV{
		{Key: "CPU", Value: cpuModel()},
		{Key: "cores", Value: fmt.Sprint(runtime.NumCPU())},
		{Key: "memory", Value: memTotal()},
		{Key: "Go", Value: runtime.Version()},
		{Key: "kernel", Value: strings.TrimSpace(readFirstLine("/proc/sys/kernel/osrelease"))},
		{Key: "commit", Value: gitDescribe()},
	}
}

func cpuModel() string {
	return procField("/proc/cpuinfo", "model name")
}

func memTotal() string {
	v := procField("/proc/meminfo", "MemTotal")
	var kb int64
	if _, err := fmt.Sscanf(v, "%d kB", &kb); err == nil {
		return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	return v
}

// procField returns the value of the first "key: value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer func() { _ = f.Close() }() // read-only: nothing to flush
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func readFirstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return line
}

func git(args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func gitShortSHA() string { return git("rev-parse", "--short", "HEAD") }

func gitDescribe() string {
	sha := git("rev-parse", "HEAD")
	if git("status", "--porcelain", "--untracked-files=no") != "" {
		sha += " (with uncommitted changes)"
	}
	return sha
}

func settings(o options) []report.KV {
	c := o.cfg
	pp := strings.Join(c.PodpilotArgs, " ")
	if pp == "" {
		pp = "(none)"
	}
	adapter := orNotGiven(c.Adapter, "PROMETHEUS_ADAPTER")
	return []report.KV{
		{Key: "sizes N (b, c)", Value: strings.Trim(fmt.Sprint(c.Sizes), "[]")},
		{Key: "namespaces", Value: fmt.Sprint(c.Namespaces)},
		{Key: "steady window", Value: fmt.Sprintf("%d sync periods", c.Rounds)},
		{Key: "stock HPA in c", Value: stockHPASizes(c.StockHPAMax)},
		{Key: "kube-controller-manager client", Value: fmt.Sprintf("--kube-api-qps=%d --kube-api-burst=%d", c.KCMQPS, c.KCMBurst)},
		{Key: "Prometheus scrape interval", Value: c.ScrapeInterval.String()},
		{Key: "HPA and PodAutoscaler sync period", Value: c.SyncPeriod.String()},
		{Key: "discovery relist interval", Value: c.RelistInterval.String()},
		{Key: "scenario a", Value: fmt.Sprintf("%d pods, concurrency %d, %s per target", c.APIPods, c.APIConcurrency, c.APIDuration)},
		{Key: "scenario d", Value: fmt.Sprintf("%d steps per kind", c.ReactSteps)},
		{Key: "scenario e", Value: fmt.Sprintf("extra series %s over %d names", strings.Trim(fmt.Sprint(c.MemorySeries), "[]"), c.MetricNames)},
		{Key: "scenario g", Value: fmt.Sprintf("pods %s (and 0) in Deployments of 1000, pod shape %s", strings.Trim(fmt.Sprint(c.Pods), "[]"), c.PodShape)},
		{Key: "extra podpilot flags", Value: pp},
		{Key: "prometheus-adapter", Value: adapter},
		{Key: "prometheus-adapter on podpilot's libraries (scenario e)", Value: orNotGiven(c.AdapterCurrent, "PROMETHEUS_ADAPTER_CURRENT")},
		{Key: "rules", Value: "podpilot's default rules (pkg/provider/rules.DefaultYAML)"},
	}
}

// orNotGiven is path, or says that env was not set.
func orNotGiven(path, env string) string {
	if path == "" {
		return "not given (" + env + " unset)"
	}
	return path
}

// stockHPASizes says at which N scenario c runs the stock HPA.
func stockHPASizes(limit int) string {
	if limit <= 0 {
		return "at every N"
	}
	return fmt.Sprintf("up to N = %d (--stock-hpa-max); PodAutoscalers only above", limit)
}
