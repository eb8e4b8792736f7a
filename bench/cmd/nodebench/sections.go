package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// env is the running cluster with podpilot installed.
type env struct {
	c      *framework.Cluster
	o      options
	images string
	// sync is both autoscalers' sync period in this run.
	sync time.Duration
	// adapterUp: prometheus-adapter runs and serves custom.metrics.k8s.io.
	adapterUp bool
}

func numCPU() int { return runtime.NumCPU() }

// image measures the image tarball and its layer.
func (e *env) image(context.Context) (report.Section, error) {
	sec := report.Section{Title: "Image", Intro: "`make image`: bin/podpilot and the CA certificates in one layer, no base image."}
	tarball := filepath.Join(e.images, "podpilot.tar")
	st, err := os.Stat(tarball)
	if err != nil {
		return sec, fmt.Errorf("stat %s: %w", tarball, err)
	}
	bin, err := os.Stat(filepath.Join(framework.RepoRoot(), "bin", "podpilot"))
	if err != nil {
		return sec, fmt.Errorf("stat bin/podpilot: %w", err)
	}
	layer, err := largestEntry(tarball)
	if err != nil {
		return sec, err
	}
	mib := func(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
	sec.Tables = []report.Table{{Header: []string{"what", "size"}, Rows: [][]string{
		{"image tarball (docker save)", mib(st.Size())},
		{"its layer, gzip (what a registry stores and a node pulls)", mib(layer)},
		{"bin/podpilot (static, stripped)", mib(bin.Size())},
	}}}
	sec.Headline = []string{fmt.Sprintf("image: %s compressed layer, %s binary", mib(layer), mib(bin.Size()))}
	return sec, nil
}

// largestEntry returns the size of the largest file in a tarball: the layer.
func largestEntry(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var largest int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return largest, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		largest = max(largest, h.Size)
	}
}

// prom queries the cluster's Prometheus.
func (e *env) prom() (promv1.API, error) {
	c, err := promapi.NewClient(promapi.Config{Address: e.c.PrometheusURL})
	if err != nil {
		return nil, fmt.Errorf("prometheus client: %w", err)
	}
	return promv1.NewAPI(c), nil
}

// podValues runs an instant query and returns its value per pod label.
func (e *env) podValues(ctx context.Context, q string) (map[string]float64, error) {
	api, err := e.prom()
	if err != nil {
		return nil, err
	}
	v, _, _, err := api.Query(ctx, q, time.Now())
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("query %s: not a vector", q)
	}
	out := map[string]float64{}
	for _, s := range vec {
		out[string(s.Metric["pod"])] = float64(s.Value)
	}
	return out, nil
}

// busy makes podpilot's pods work until the returned stop is called: a few
// clients asking the metrics APIs (each answer queries Prometheus).
func (e *env) busy(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = e.c.RawGet(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+framework.PodpilotNamespace+"/pods")
				_, _ = e.c.RawGet(ctx, "/apis/custom.metrics.k8s.io/v1beta2/namespaces/"+framework.PodpilotNamespace+"/pods/*/process_cpu_seconds_per_second")
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// footprint measures podpilot's pods at idle and busy, from cAdvisor.
func (e *env) footprint(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "podpilot's pods: memory and cpu",
		Intro: fmt.Sprintf("cAdvisor's series of the container `podpilot` through Prometheus: RSS and working set at the end of a %s window, "+
			"cpu as the rate over that window. Idle: no client, one PodAutoscaler-free cluster. Busy: 3 clients asking metrics.k8s.io and "+
			"custom.metrics.k8s.io through the kube-apiserver in a loop.", e.o.window)}
	table := report.Table{Header: []string{"state", "pod", "RSS", "working set", "cpu"}}
	for _, state := range []string{"idle", "busy"} {
		stop := func() {}
		if state == "busy" {
			stop = e.busy(ctx)
		}
		err := sleep(ctx, e.o.window)
		if err == nil {
			err = e.footprintRows(ctx, state, &table, &sec)
		}
		stop()
		if err != nil {
			return sec, err
		}
	}
	sec.Tables = []report.Table{table}
	return sec, nil
}

func (e *env) footprintRows(ctx context.Context, state string, table *report.Table, sec *report.Section) error {
	sel := fmt.Sprintf(`namespace=%q,container="podpilot"`, framework.PodpilotNamespace)
	w := fmt.Sprintf("%ds", int(e.o.window.Seconds()))
	rss, err := e.podValues(ctx, "container_memory_rss{"+sel+"}")
	if err != nil {
		return err
	}
	ws, err := e.podValues(ctx, "container_memory_working_set_bytes{"+sel+"}")
	if err != nil {
		return err
	}
	cpu, err := e.podValues(ctx, "rate(container_cpu_usage_seconds_total{"+sel+"}["+w+"])")
	if err != nil {
		return err
	}
	pods := make([]string, 0, len(rss))
	for p := range rss {
		pods = append(pods, p)
	}
	sort.Strings(pods)
	var maxRSS, maxCPU float64
	for _, p := range pods {
		table.Rows = append(table.Rows, []string{state, p, fmt.Sprintf("%.1f MiB", rss[p]/(1<<20)),
			fmt.Sprintf("%.1f MiB", ws[p]/(1<<20)), fmt.Sprintf("%.1fm", 1000*cpu[p])})
		maxRSS, maxCPU = max(maxRSS, rss[p]), max(maxCPU, cpu[p])
	}
	sec.Headline = append(sec.Headline, fmt.Sprintf("podpilot pod %s: RSS ≤ %.1f MiB, cpu ≤ %.1fm", state, maxRSS/(1<<20), 1000*maxCPU))
	return nil
}

// utilization compares podpilot's cpu Utilization of its own pods (a dry-run
// PodAutoscaler on its Deployment) with cAdvisor's raw series and with
// metrics-server, read at the same moment, while the pods are busy.
func (e *env) utilization(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "cpu Utilization: podpilot, cAdvisor, metrics-server",
		Intro: "A dry-run PodAutoscaler (cpu Utilization, target 50%) on podpilot's own Deployment (requests 100m), the pods kept busy. " +
			"podpilot: the PodAutoscaler's status (metrics.k8s.io from `resourceRules`, `irate(…[1m])`); cAdvisor: " +
			"`sum(irate(container_cpu_usage_seconds_total[1m]))` / requests; metrics-server v0.8.0 (10s resolution) / requests. Five readings 10s apart."}
	ms, err := e.c.StartMetricsServer(ctx, 10*time.Second)
	if err != nil {
		return sec, err
	}
	defer ms.Stop()
	pp, err := versioned.NewForConfig(e.c.Config)
	if err != nil {
		return sec, fmt.Errorf("podpilot clientset: %w", err)
	}
	pa := framework.PodAutoscalerYAML("self", "deployment", "podpilot", 2, 2, `  dryRun: true
  resourceMetrics:
  - resourceName: cpu
    targetType: Utilization
    averageUtilization: 50
`)
	if _, err := e.c.ApplyErr(ctx, framework.PodpilotNamespace, pa, false); err != nil {
		return sec, err
	}
	stop := e.busy(ctx)
	defer stop()
	if err := sleep(ctx, 90*time.Second); err != nil {
		return sec, err
	}
	table := report.Table{Header: []string{"reading", "podpilot", "cAdvisor raw", "metrics-server"}}
	for i := range 5 {
		row, err := e.utilizationRow(ctx, pp, ms)
		if err != nil {
			return sec, err
		}
		table.Rows = append(table.Rows, append([]string{fmt.Sprint(i + 1)}, row...))
		if err := sleep(ctx, 10*time.Second); err != nil {
			return sec, err
		}
	}
	sec.Tables = []report.Table{table}
	last := table.Rows[len(table.Rows)-1]
	sec.Headline = []string{fmt.Sprintf("cpu Utilization of podpilot's pods: podpilot %s, cAdvisor %s, metrics-server %s", last[1], last[2], last[3])}
	return sec, nil
}

func (e *env) utilizationRow(ctx context.Context, pp versioned.Interface, ms *framework.MetricsServer) ([]string, error) {
	pa, err := pp.AutoscalingV1alpha1().PodAutoscalers(framework.PodpilotNamespace).Get(ctx, "self", metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get PodAutoscaler self: %w", err)
	}
	podpilot := "-"
	if len(pa.Status.CurrentMetrics) > 0 && pa.Status.CurrentMetrics[0].AverageUtilization != nil {
		podpilot = fmt.Sprintf("%d%%", *pa.Status.CurrentMetrics[0].AverageUtilization)
	}
	raw, err := e.podValues(ctx, fmt.Sprintf(`sum by (pod) (irate(container_cpu_usage_seconds_total{namespace=%q,pod=~"podpilot-.*",container!=""}[1m]))`, framework.PodpilotNamespace))
	if err != nil {
		return nil, err
	}
	list, err := ms.PodMetrics(ctx, framework.PodpilotNamespace)
	if err != nil {
		return nil, err
	}
	var rawSum, msSum float64
	for _, v := range raw {
		rawSum += v
	}
	n := 0
	for _, p := range list.Items {
		if len(p.Name) > 9 && p.Name[:9] == "podpilot-" {
			for _, c := range p.Containers {
				msSum += c.Usage.Cpu().AsApproximateFloat64()
			}
			n++
		}
	}
	request := 0.1 // the chart's cpu request per pod
	pct := func(sum float64, pods int) string {
		if pods == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*sum/(request*float64(pods)))
	}
	return []string{podpilot, pct(rawSum, len(raw)), pct(msSum, n)}, nil
}
