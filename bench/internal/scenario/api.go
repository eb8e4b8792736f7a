package scenario

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/bench/internal/svg"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	apiNamespace = benchNSPrefix + "api"
	apiWorkload  = "api"
)

// apiTarget is one way of getting pods/* for the bench's workload.
type apiTarget struct {
	name   string
	client *http.Client
	req    request
	// server is the metrics server whose CPU the request costs (nil: none).
	server *framework.Podpilot
	// setup, when set, runs before the target is measured: the aggregated
	// targets point the custom metrics APIServices at their server.
	setup func(context.Context) error
}

// apiRun is one target's measurement.
type apiRun struct {
	target          string
	res             driveResult
	serverCPU, pCPU time.Duration
	hasServer       bool
}

func (r apiRun) rps() float64 { return float64(len(r.res.LatenciesMS)) / r.res.Elapsed.Seconds() }

func perRequestMS(cpu time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(cpu.Microseconds()) / 1000 / float64(n)
}

// rawQuery is the PromQL podpilot sends for pods/* in ns under the default
// per-pod gauge rule (sum(<<.Series>>{<<.LabelMatchers>>}) by (<<.GroupBy>>)
// with every pod matched).
func rawQuery(ns string) string {
	return fmt.Sprintf(`sum(%s{namespace=%q,pod!=""}) by (pod)`, loadMetric, ns)
}

func customPath(ns string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/*/%s", ns, loadMetric)
}

// API runs scenario a: pods/* over APIPods pods at APIConcurrency for
// APIDuration per target: the raw query to Prometheus (the floor), podpilot
// direct and through the aggregator, and the optional prometheus-adapter.
func (e *Env) API(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "a. Metrics API per-request cost",
		Intro: fmt.Sprintf("`GET %s` for %d kwok pods, %d concurrent clients for %s per target after a 2 s warm-up. "+
			"The floor is the same PromQL podpilot sends (`%s`) POSTed straight to Prometheus. CPU per request is the server process's "+
			"utime+stime delta (/proc) over the window divided by the requests served.",
			customPath(apiNamespace), e.Cfg.APIPods, e.Cfg.APIConcurrency, e.Cfg.APIDuration, rawQuery(apiNamespace))}
	w := []workload{{ns: apiNamespace, name: apiWorkload}}
	if err := e.ensureNamespaces(ctx, apiNamespace); err != nil {
		return sec, err
	}
	if err := e.ensureDeployments(ctx, w, int32(e.Cfg.APIPods)); err != nil {
		return sec, err
	}
	e.Load.Set(apiNamespace, apiWorkload, float64(targetPerPod*e.Cfg.APIPods))
	if err := e.waitServed(ctx, e.direct, fmt.Sprintf("https://127.0.0.1:%d", e.Podpilot.Port), e.Cfg.APIPods); err != nil {
		return sec, err
	}
	targets, cleanup, err := e.apiTargets(ctx, &sec)
	defer cleanup()
	if err != nil {
		return sec, err
	}
	var runs []apiRun
	for _, t := range targets {
		e.logf("a: %s for %s", t.name, e.Cfg.APIDuration)
		runs = append(runs, e.measureTarget(ctx, t))
	}
	sec.Tables = append(sec.Tables, apiTable(runs))
	sec.Headline = apiHeadline(runs)
	var samples []svg.Sample
	for _, r := range runs {
		samples = append(samples, svg.Sample{Name: r.target, Values: r.res.LatenciesMS})
		if r.res.Errors > 0 {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: %d errors, first: %s", r.target, r.res.Errors, r.res.FirstError))
		}
	}
	img, err := e.writeSVG("api-latency", svg.CDF{
		Title:    "pods/* latency, " + fmt.Sprint(e.Cfg.APIPods) + " pods, concurrency " + fmt.Sprint(e.Cfg.APIConcurrency),
		Subtitle: "cumulative share of requests answered within x ms (log scale)", XLabel: "latency (ms)", LogX: true, Samples: samples,
	}.Render())
	if err != nil {
		return sec, err
	}
	sec.Images = append(sec.Images, img)
	return sec, nil
}

func (e *Env) measureTarget(ctx context.Context, t apiTarget) apiRun {
	if t.setup != nil {
		if err := t.setup(ctx); err != nil {
			e.logf("a: %s: setup: %v", t.name, err)
		}
	}
	drive(ctx, t.client, t.req, e.Cfg.APIConcurrency, 2*time.Second) // warm-up
	serverPid := 0
	if t.server != nil {
		serverPid, _ = e.Pid(t.server)
	}
	s0, p0 := cpuOf(serverPid), e.CPU("prometheus")
	res := drive(ctx, t.client, t.req, e.Cfg.APIConcurrency, e.Cfg.APIDuration)
	return apiRun{target: t.name, res: res, serverCPU: cpuOf(serverPid) - s0, pCPU: e.CPU("prometheus") - p0, hasServer: t.server != nil}
}

func apiTable(runs []apiRun) report.Table {
	t := report.Table{Header: []string{"target", "req/s", "× floor", "p50 ms", "p90 ms", "p99 ms", "× floor p50",
		"server CPU ms/req", "Prometheus CPU ms/req", "errors"}}
	floor := runs[0]
	fs := stats.Summarize(floor.res.LatenciesMS)
	for _, r := range runs {
		s := stats.Summarize(r.res.LatenciesMS)
		server := "–"
		if r.hasServer {
			server = stats.Num(perRequestMS(r.serverCPU, s.N), 2)
		}
		t.Rows = append(t.Rows, []string{r.target, stats.Num(r.rps(), 0), stats.Ratio(r.rps(), floor.rps()),
			stats.Num(s.P50, 1), stats.Num(s.P90, 1), stats.Num(s.P99, 1), stats.Ratio(s.P50, fs.P50),
			server, stats.Num(perRequestMS(r.pCPU, s.N), 2), fmt.Sprint(r.res.Errors)})
	}
	return t
}

// apiTargets returns the targets in report order, the floor first, and a
// cleanup that stops the prometheus-adapter and points the APIServices back
// at podpilot.
func (e *Env) apiTargets(ctx context.Context, sec *report.Section) ([]apiTarget, func(), error) {
	promClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: e.Cfg.APIConcurrency}}
	direct := fmt.Sprintf("https://127.0.0.1:%d", e.Podpilot.Port)
	agg, err := e.aggregatorClient()
	if err != nil {
		return nil, func() {}, err
	}
	targets := []apiTarget{
		{name: "raw PromQL → Prometheus (floor)", client: promClient, req: queryRequest(e.Cluster.PrometheusURL, rawQuery(apiNamespace))},
		{name: "podpilot direct", client: e.direct, req: getRequest(direct, customPath(apiNamespace)), server: e.Podpilot},
		{name: "podpilot via aggregator", client: agg, req: getRequest(e.Cluster.Config.Host, customPath(apiNamespace)), server: e.Podpilot,
			setup: func(ctx context.Context) error { return e.routeCustomAPIs(ctx, e.Podpilot.Port) }},
	}
	if e.Cfg.Adapter == "" {
		sec.Notes = append(sec.Notes, "prometheus-adapter: skipped (set PROMETHEUS_ADAPTER=/path/to/adapter to measure it side by side).")
		return targets, func() {}, nil
	}
	return e.adapterTargets(ctx, targets, agg)
}

// routeCustomAPIs points the custom metrics APIServices at the server on
// port and waits until the aggregator reports them Available again.
func (e *Env) routeCustomAPIs(ctx context.Context, port int) error {
	if err := e.Cluster.RegisterSomeMetricsAPIs(ctx, port, customAPIs...); err != nil {
		return err
	}
	for _, name := range customAPIs {
		err := framework.PollEvery(ctx, 200*time.Millisecond, time.Minute, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return e.Cluster.APIServiceAvailable(ctx, name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Env) aggregatorClient() (*http.Client, error) {
	return restHTTPClient(e.Cluster.Config)
}

// waitServed waits until pods/* from base answers for want pods.
func (e *Env) waitServed(ctx context.Context, hc *http.Client, base string, want int) error {
	return framework.Poll(ctx, 3*time.Minute, fmt.Sprintf("pods/* served for %d pods", want), func(ctx context.Context) (bool, string, error) {
		b, err := get(ctx, hc, base+customPath(apiNamespace))
		if err != nil {
			return false, "", err
		}
		n, err := countItems(b)
		return n == want, fmt.Sprintf("%d items", n), err
	})
}

func apiHeadline(runs []apiRun) []string {
	floor := runs[0]
	fs := stats.Summarize(floor.res.LatenciesMS)
	var out []string
	for _, r := range runs[1:] {
		s := stats.Summarize(r.res.LatenciesMS)
		out = append(out, fmt.Sprintf("a. pods/* %s: %s req/s = %s the raw query's %s req/s; p50 %s ms (%s); %s ms of server CPU per request vs %s ms of Prometheus CPU per raw query",
			r.target, stats.Num(r.rps(), 0), stats.Ratio(r.rps(), floor.rps()), stats.Num(floor.rps(), 0), stats.Num(s.P50, 1),
			stats.Ratio(s.P50, fs.P50), stats.Num(perRequestMS(r.serverCPU, s.N), 2), stats.Num(perRequestMS(floor.pCPU, fs.N), 2)))
	}
	return out
}
