package scenario

import (
	"fmt"
	"math"
	"strings"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/bench/internal/svg"
)

// ScaleSections renders scenarios b and c from the Phases of every size
// (each size's stock HPA phase followed by its PodAutoscaler phase).
func (e *Env) ScaleSections(bySize map[int][]Phase) ([]report.Section, error) {
	b := report.Section{Title: "b. Stock HPAs reading the metrics API",
		Intro: fmt.Sprintf("N autoscaling/v2 HPAs (Pods metric `%s`, AverageValue %d) over N kwok Deployments of %d pods in %d namespaces; "+
			"kube-controller-manager syncs every %s, Prometheus scrapes every %s. Steady state over %d sync periods: Prometheus queries "+
			"per round counted by podpilot (`podpilot_prometheus_client_request_duration_seconds_count{operation=\"query\"}`) and by Prometheus "+
			"(`prometheus_engine_query_duration_seconds_count{slice=\"inner_eval\"}`), against the N HPAs and the %d distinct (namespace, metric) pairs.",
			loadMetric, targetPerPod, e.podsPerTarget(), e.Cfg.Namespaces, e.Cfg.SyncPeriod, e.Cfg.ScrapeInterval, e.Cfg.Rounds, e.Cfg.Namespaces)}
	bt := report.Table{Header: []string{"N", "all reading after s", "queries/round (podpilot)", "× N HPAs", "× distinct",
		"queries/round (Prometheus)", "FailedGetPodsMetric", "kcm reconcile mean ms", "kcm CPU s/round"}}
	c := report.Section{Title: "c. PodAutoscalers against stock HPAs",
		Intro: fmt.Sprintf("The same N Deployments, first with N stock HPAs, then (after deleting them and resetting to %d pods at 100) with N PodAutoscalers "+
			"on the same metric and target. The step sets every Deployment from 100 to %d per pod; first/last = step → the first/last Deployment's ", e.podsPerTarget(), e.stepTo()) +
			"`spec.replicas` changed. Writes are kube-apiserver `apiserver_request_total` deltas (POST/PUT/PATCH/APPLY/DELETE on HPAs, " +
			"PodAutoscalers, Deployments' scale subresource and events; events include the Deployment controller's ScalingReplicaSet). CPU is the autoscaler's process: kube-controller-manager (all its controllers) or podpilot. " +
			"PA round = the longest round of the steady window, as an upper bound from podpilot_autoscaler_round_duration_seconds (a round runs from the first sync after an idle queue until the queue is idle again: with rounds aligned to one scrape, every PodAutoscaler due then). Full rounds must fit in one sync period. " +
			"Over the steady window: reconciliations/s are the autoscaler's `horizontal_pod_autoscaler_controller_reconciliations_total` (podpilot's " +
			"with its `podpilot_` prefix: one per object per sync, as upstream counts them); queue wait p99 is an upper bound (a bucket's bound) of the " +
			"99th percentile of `workqueue_queue_duration_seconds` of the autoscaler's queue; API requests/s are every client's " +
			"(`apiserver_request_total`, the bench's own watch and kwok included, in both phases alike)."}
	ct := report.Table{Header: []string{"N", "autoscaler", "first s", "last s", "× HPA last", "resized", "queries/round", "× HPA",
		"writes/round (steady)", "× HPA", "writes in step", "CPU s/round", "podpilot RSS MiB", "PA round s (max)",
		"reconciliations/s", "queue wait p99 s (≤)", "API requests/s"}}
	var sizes []float64
	var qHPA, qPA, lastHPA, lastPA, roundPA []float64
	for _, n := range sortedSizes(bySize) {
		ph := bySize[n]
		sizes = append(sizes, float64(n))
		h, p := find(ph, kindHPA), find(ph, kindPA)
		if h != nil {
			bt.Rows = append(bt.Rows, []string{fmt.Sprint(n), stats.Num(h.readyAfter.Seconds(), 0), stats.Num(h.queries, 1),
				stats.Ratio(h.queries, float64(n)), stats.Ratio(h.queries, float64(e.Cfg.Namespaces)), stats.Num(h.promQueries, 1),
				fmt.Sprint(h.failedGet), stats.Num(h.kcmReconcileMean*1000, 1), stats.Num(h.cpu.Seconds(), 2)})
		}
		if h != nil && p != nil {
			c.Headline = append(c.Headline, fmt.Sprintf("c. N=%d × %d pods, step 100 → %d: last Deployment resized by PodAutoscalers after %s s = %s the stock HPA's %s s; "+
				"Prometheus queries per round %s = %s the HPAs' %s; API writes per round %s = %s the HPAs' %s",
				n, e.podsPerTarget(), e.stepTo(), stats.Num(p.last.Seconds(), 0), stats.Ratio(p.last.Seconds(), h.last.Seconds()), stats.Num(h.last.Seconds(), 0),
				stats.Num(p.queries, 1), stats.Ratio(p.queries, h.queries), stats.Num(h.queries, 1),
				stats.Num(sumValues(p.writes)/p.rounds, 1), stats.Ratio(sumValues(p.writes)/p.rounds, sumValues(h.writes)/h.rounds), stats.Num(sumValues(h.writes)/h.rounds, 1)))
		}
		for _, x := range []*Phase{h, p} {
			if x != nil {
				ct.Rows = append(ct.Rows, phaseRow(x, h))
				c.Notes = append(c.Notes, phaseNotes(x)...)
			}
		}
		qHPA, lastHPA = append(qHPA, field(h, func(x *Phase) float64 { return x.queries })), append(lastHPA, field(h, func(x *Phase) float64 { return x.last.Seconds() }))
		qPA, lastPA = append(qPA, field(p, func(x *Phase) float64 { return x.queries })), append(lastPA, field(p, func(x *Phase) float64 { return x.last.Seconds() }))
		roundPA = append(roundPA, field(p, func(x *Phase) float64 { return x.paRoundMax }))
	}
	b.Tables, c.Tables = []report.Table{bt}, []report.Table{ct}
	img1, err := e.writeSVG("queries-vs-n", svg.Line{Title: "Prometheus queries per sync round vs N", Subtitle: "steady state, counted by podpilot",
		XLabel: "N autoscalers", YLabel: "queries per round", X: sizes,
		Series: []svg.Series{{Name: string(kindHPA), Y: qHPA}, {Name: string(kindPA), Y: qPA}}}.Render())
	if err != nil {
		return nil, err
	}
	img2, err := e.writeSVG("round-vs-n", svg.Line{Title: "Step → last Deployment resized, and PA round, vs N", Subtitle: "seconds",
		XLabel: "N autoscalers", YLabel: "seconds", X: sizes,
		Series: []svg.Series{{Name: "HPA last resized", Y: lastHPA}, {Name: "PA last resized", Y: lastPA}, {Name: "PA longest round (≤)", Y: roundPA}}}.Render())
	if err != nil {
		return nil, err
	}
	b.Images, c.Images = []report.Image{img1}, []report.Image{img2}
	return []report.Section{b, c}, nil
}

func phaseRow(x, hpa *Phase) []string {
	base := func(f func(*Phase) float64) float64 { return field(hpa, f) }
	steady := sumValues(x.writes) / x.rounds
	round := "–"
	if x.kind == kindPA {
		round = "≤ " + stats.Num(x.paRoundMax, 3)
	}
	return []string{fmt.Sprint(x.n), string(x.kind), stats.Num(x.first.Seconds(), 1), stats.Num(x.last.Seconds(), 1),
		stats.Ratio(x.last.Seconds(), base(func(p *Phase) float64 { return p.last.Seconds() })), fmt.Sprintf("%d/%d", x.resized, x.n),
		stats.Num(x.queries, 1), stats.Ratio(x.queries, base(func(p *Phase) float64 { return p.queries })),
		stats.Num(steady, 1), stats.Ratio(steady, base(func(p *Phase) float64 { return sumValues(p.writes) / p.rounds })),
		stats.Num(sumValues(x.stepWrites), 0), stats.Num(x.cpu.Seconds(), 2), stats.Num(x.rssMiB, 0), round,
		stats.Num(x.reconcilesPerSec, 1), stats.Num(x.queueWaitP99, 3), stats.Num(x.apiRequestsPerSec, 0)}
}

func phaseNotes(x *Phase) []string {
	notes := []string{fmt.Sprintf("N=%d %s: steady writes per round by resource: %s; writes during the step: %s.",
		x.n, x.kind, formatWrites(x.writes, x.rounds), formatWrites(x.stepWrites, 1))}
	if x.kind == kindPA {
		notes = append(notes, fmt.Sprintf("N=%d PodAutoscaler: %d status writes in the %.1f-round steady window, bursts %s s; "+
			"longest round ≤ %s s, round lateness %s s at the window's end.",
			x.n, x.paWrites, x.rounds, formatSpans(x.paRoundSpans), stats.Num(x.paRoundMax, 3), stats.Num(x.paLateness, 3)))
	}
	for _, h := range x.histograms {
		notes = append(notes, fmt.Sprintf("N=%d %s: %s.", x.n, x.kind, h))
	}
	return notes
}

func formatSpans(spans []float64) string {
	if len(spans) == 0 {
		return "none"
	}
	parts := make([]string, len(spans))
	for i, s := range spans {
		parts[i] = stats.Num(s, 1)
	}
	return strings.Join(parts, ", ")
}

func find(ph []Phase, k kind) *Phase {
	for i := range ph {
		if ph[i].kind == k {
			return &ph[i]
		}
	}
	return nil
}

func field(p *Phase, f func(*Phase) float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return f(p)
}

func sortedSizes(m map[int][]Phase) []int {
	var out []int
	for n := range m {
		out = append(out, n)
	}
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
