package scenario

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/bench/internal/svg"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	apiNamespace = benchNSPrefix + "api"
	apiWorkload  = "api"
)

// apiMix is what the clients of scenario a ask for: the same request again
// and again, or a spread of distinct requests taken in turn. paths[i] and
// queries[i] ask for the same thing, through the metrics API and as the raw
// PromQL the request stands for.
type apiMix struct {
	name    string
	paths   []string
	queries []string
}

// apiServer is one thing that answers scenario a's requests: a metrics
// server (podpilot or prometheus-adapter), with how it was configured.
type apiServer struct {
	label  string
	server *framework.Podpilot
	// direct is a client for its own port.
	direct *http.Client
}

// apiTarget is one way of getting one mix's requests answered.
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

// rawQueryByName is the PromQL that pods/NAME stands for under the same rule
// (what podpilot sends for it with sharing off).
func rawQueryByName(ns, pod string) string {
	return fmt.Sprintf(`sum(%s{namespace=%q,pod=%q}) by (pod)`, loadMetric, ns, pod)
}

func customPath(ns string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/*/%s", ns, loadMetric)
}

func customPathByName(ns, pod string) string {
	return fmt.Sprintf("/apis/custom.metrics.k8s.io/v1beta2/namespaces/%s/pods/%s/%s", ns, pod, loadMetric)
}

// apiMixes are scenario a's two request mixes: pods/* again and again (what
// a fleet of HPAs on one Deployment asks), and every pod by name in turn, a
// distinct object per request (what no cache of answers can serve from one
// entry without widening the query).
func apiMixes(ns string, pods []string) []apiMix {
	same := apiMix{name: "same request (pods/*)", paths: []string{customPath(ns)}, queries: []string{rawQuery(ns)}}
	distinct := apiMix{name: fmt.Sprintf("distinct requests (%d pods by name, in turn)", len(pods))}
	for _, p := range pods {
		distinct.paths = append(distinct.paths, customPathByName(ns, p))
		distinct.queries = append(distinct.queries, rawQueryByName(ns, p))
	}
	return []apiMix{same, distinct}
}

// inTurn returns a request that builds reqs[0], reqs[1], … in turn across
// every client of one drive.
func inTurn(reqs []request) request {
	var next atomic.Uint64
	return func(ctx context.Context) (*http.Request, error) {
		return reqs[(next.Add(1)-1)%uint64(len(reqs))](ctx)
	}
}

func getRequests(base string, paths []string) request {
	reqs := make([]request, len(paths))
	for i, p := range paths {
		reqs[i] = getRequest(base, p)
	}
	return inTurn(reqs)
}

func queryRequests(promURL string, queries []string) request {
	reqs := make([]request, len(queries))
	for i, q := range queries {
		reqs[i] = queryRequest(promURL, q)
	}
	return inTurn(reqs)
}

// API runs scenario a: APIPods pods at APIConcurrency for APIDuration per
// target, for each request mix: the raw queries to Prometheus (the floor),
// podpilot with its query sharing on (the default) and off, direct and
// through the aggregator, and the optional prometheus-adapter through the
// aggregator at its default client throttle and with it lifted.
func (e *Env) API(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "a. Metrics API per-request cost",
		Intro: fmt.Sprintf("%d kwok pods in one namespace, %d concurrent clients for %s per target after a 2 s warm-up, for two request mixes: "+
			"`GET %s` again and again, and `GET …/pods/NAME/%s` for each pod in turn (a distinct object per request). "+
			"The floor is the PromQL each request stands for (`%s`, or with `pod=\"NAME\"`), POSTed straight to Prometheus in the same turn. "+
			"podpilot runs twice: with its query sharing on (the default `--metrics-query-cache-max-age=5s`: concurrent requests for one query wait for the one in flight, "+
			"later ones reuse its answer for up to 5 s, and requests by name are widened to their namespace's query) and with it off (`=0`: one Prometheus query per request). "+
			"CPU per request is the server process's utime+stime delta (/proc) over the window divided by the requests served.",
			e.Cfg.APIPods, e.Cfg.APIConcurrency, e.Cfg.APIDuration, customPath(apiNamespace), loadMetric, rawQuery(apiNamespace))}
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
	pods, err := e.podNames(ctx, apiNamespace)
	if err != nil {
		return sec, err
	}
	servers, cleanup, err := e.apiServers(ctx, &sec)
	defer cleanup()
	if err != nil {
		return sec, err
	}
	agg, err := e.aggregatorClient()
	if err != nil {
		return sec, err
	}
	var samples []svg.Sample
	for _, mix := range apiMixes(apiNamespace, pods) {
		var runs []apiRun
		for _, t := range e.apiTargets(mix, servers, agg) {
			e.logf("a: %s, %s for %s", mix.name, t.name, e.Cfg.APIDuration)
			runs = append(runs, e.measureTarget(ctx, t))
		}
		sec.Tables = append(sec.Tables, apiTable(mix.name, runs))
		sec.Headline = append(sec.Headline, apiHeadline(mix.name, runs)...)
		for _, r := range runs {
			samples = append(samples, svg.Sample{Name: mix.name + ": " + r.target, Values: r.res.LatenciesMS})
			if r.res.Errors > 0 {
				sec.Notes = append(sec.Notes, fmt.Sprintf("%s, %s: %d errors, first: %s", mix.name, r.target, r.res.Errors, r.res.FirstError))
			}
		}
	}
	img, err := e.writeSVG("api-latency", svg.CDF{
		Title:    "metrics API latency, " + fmt.Sprint(e.Cfg.APIPods) + " pods, concurrency " + fmt.Sprint(e.Cfg.APIConcurrency),
		Subtitle: "cumulative share of requests answered within x ms (log scale)", XLabel: "latency (ms)", LogX: true, Samples: samples,
	}.Render())
	if err != nil {
		return sec, err
	}
	sec.Images = append(sec.Images, img)
	return sec, nil
}

// podNames returns the names of the pods in ns, sorted.
func (e *Env) podNames(ctx context.Context, ns string) ([]string, error) {
	l, err := e.Cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", ns, err)
	}
	names := make([]string, 0, len(l.Items))
	for _, p := range l.Items {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names, nil
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

func apiTable(mix string, runs []apiRun) report.Table {
	t := report.Table{Caption: mix, Header: []string{"target", "req/s", "× floor", "p50 ms", "p90 ms", "p99 ms", "× floor p50",
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

// apiServers starts what scenario a measures beside the bench's podpilot:
// podpilot with its query sharing off, and, when configured,
// prometheus-adapter with its client throttle lifted and at its default. The
// cleanup stops them and points the APIServices back at the bench's podpilot.
func (e *Env) apiServers(ctx context.Context, sec *report.Section) ([]apiServer, func(), error) {
	servers := []apiServer{{label: "podpilot, sharing on (default)", server: e.Podpilot, direct: e.direct}}
	var started []*framework.Podpilot
	cleanup := func() {
		if err := e.routeCustomAPIs(context.WithoutCancel(ctx), e.Podpilot.Port); err != nil {
			e.logf("restore podpilot's APIServices: %v", err)
		}
		for _, p := range started {
			p.Stop()
		}
	}
	add := func(label string, p *framework.Podpilot) error {
		started = append(started, p)
		hc, err := restHTTPClient(e.Cluster.DirectConfig(p))
		if err != nil {
			return err
		}
		if err := e.waitServed(ctx, hc, fmt.Sprintf("https://127.0.0.1:%d", p.Port), e.Cfg.APIPods); err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		servers = append(servers, apiServer{label: label, server: p, direct: hc})
		return nil
	}
	unshared, err := e.startMetricsServer(ctx, e.Cfg.PodpilotBinary, append(e.podpilotArgs(), "--metrics-query-cache-max-age=0"))
	if err != nil {
		return nil, cleanup, fmt.Errorf("podpilot with sharing off: %w", err)
	}
	if err := add("podpilot, sharing off", unshared); err != nil {
		return nil, cleanup, err
	}
	if e.Cfg.Adapter == "" {
		sec.Notes = append(sec.Notes, "prometheus-adapter: skipped (set PROMETHEUS_ADAPTER=/path/to/adapter to measure it side by side).")
		return servers, cleanup, nil
	}
	for _, a := range []struct {
		label string
		qps   string
	}{{"prometheus-adapter, client QPS lifted to " + adapterClientQPS, adapterClientQPS}, {"prometheus-adapter, its default client QPS", ""}} {
		certs := "adapter-certs"
		if a.qps == "" {
			certs = "adapter-certs-default-qps"
		}
		p, err := e.startAdapterBinary(ctx, e.Cfg.Adapter, certs, a.qps)
		if err != nil {
			return nil, cleanup, fmt.Errorf("%s: %w", a.label, err)
		}
		if err := add(a.label, p); err != nil {
			return nil, cleanup, err
		}
	}
	return servers, cleanup, nil
}

// apiTargets returns mix's targets in report order: the floor first, then
// each server direct and through the aggregator.
func (e *Env) apiTargets(mix apiMix, servers []apiServer, agg *http.Client) []apiTarget {
	promClient := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: e.Cfg.APIConcurrency}}
	targets := []apiTarget{{name: "raw PromQL → Prometheus (floor)", client: promClient, req: queryRequests(e.Cluster.PrometheusURL, mix.queries)}}
	for _, s := range servers {
		port := s.server.Port
		targets = append(targets,
			apiTarget{name: s.label + ", direct", client: s.direct, req: getRequests(fmt.Sprintf("https://127.0.0.1:%d", port), mix.paths), server: s.server},
			apiTarget{name: s.label + ", via aggregator", client: agg, req: getRequests(e.Cluster.Config.Host, mix.paths), server: s.server,
				setup: func(ctx context.Context) error { return e.routeCustomAPIs(ctx, port) }})
	}
	return targets
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

// podpilotViaAggregator names the target every other server through the
// aggregator is compared with in the headline.
const podpilotViaAggregator = "podpilot, sharing on (default), via aggregator"

// apiHeadline compares, for one mix, each target with the floor, and each
// other server through the aggregator with podpilot's default through it.
func apiHeadline(mix string, runs []apiRun) []string {
	floor := runs[0]
	fs := stats.Summarize(floor.res.LatenciesMS)
	var ref *apiRun
	for i := range runs {
		if runs[i].target == podpilotViaAggregator {
			ref = &runs[i]
		}
	}
	var out []string
	for _, r := range runs[1:] {
		s := stats.Summarize(r.res.LatenciesMS)
		line := fmt.Sprintf("a. %s, %s: %s req/s = %s the raw queries' %s req/s; p50 %s ms (%s); %s ms of server CPU per request vs %s ms of Prometheus CPU per raw query",
			mix, r.target, stats.Num(r.rps(), 0), stats.Ratio(r.rps(), floor.rps()), stats.Num(floor.rps(), 0), stats.Num(s.P50, 1),
			stats.Ratio(s.P50, fs.P50), stats.Num(perRequestMS(r.serverCPU, s.N), 2), stats.Num(perRequestMS(floor.pCPU, fs.N), 2))
		if ref != nil && r.target != ref.target && strings.HasSuffix(r.target, ", via aggregator") {
			line += fmt.Sprintf("; podpilot's default through the aggregator serves %s its req/s", stats.Ratio(ref.rps(), r.rps()))
		}
		out = append(out, line)
	}
	return out
}
