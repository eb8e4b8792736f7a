package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/bench/internal/svg"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const reactNamespace = benchNSPrefix + "react"

// reactGroup is one autoscaler kind on one rule in scenario d.
type reactGroup struct {
	label  string // row name
	kind   kind
	metric string
	prefix string // Deployment name prefix
}

// ReactRows is how many rows (reactGroups) scenario d steps side by side.
const ReactRows = 6

// reactGroups are scenario d's rows, in pairs on the same rule: both kinds on
// the gauge; both on the default rule of a counter (rate over 1m); both on
// docs/how-it-decides.md's fast-reacting rule of the same counter (the stock
// HPA reading it through podpilot's custom metrics API).
func (e *Env) reactGroups() []reactGroup {
	fast := fmt.Sprintf("irate(x_total[%s])", promDuration(3*e.Cfg.ScrapeInterval))
	return []reactGroup{
		{label: string(kindHPA), kind: kindHPA, metric: loadMetric, prefix: "r-hpa"},
		{label: string(kindPA), kind: kindPA, metric: loadMetric, prefix: "r-pa"},
		{label: "stock HPA, rate(x_total[1m])", kind: kindHPA, metric: stepRateMetric, prefix: "r-hpa-rate"},
		{label: "PodAutoscaler, rate(x_total[1m])", kind: kindPA, metric: stepRateMetric, prefix: "r-pa-rate"},
		{label: "stock HPA, " + fast, kind: kindHPA, metric: stepFastMetric, prefix: "r-hpa-fast"},
		{label: "PodAutoscaler, " + fast, kind: kindPA, metric: stepFastMetric, prefix: "r-pa-fast"},
	}
}

// React runs scenario d: ReactSteps Deployments per group at 80 per pod
// (2 pods, target 100), each stepped to 300 per pod at an offset spread
// evenly over one scrape interval, and the time from each step to its
// Deployment's spec.replicas changing, every group side by side in the same
// window.
func (e *Env) React(ctx context.Context) (report.Section, error) {
	groups := e.reactGroups()
	sec := report.Section{Title: "d. Reaction time",
		Intro: fmt.Sprintf("%d Deployments per row (2 pods at 80 per pod against a target of 100) in one namespace; "+
			"step *i* sets Deployment *i* of each row to 300 per pod at *i*/%d of the %s scrape interval, so the steps' phase covers the "+
			"scrape and sync periods. The rows come in pairs, the stock HPA and the PodAutoscaler on the same rule: a per-pod gauge; a per-pod counter growing at the same rate "+
			"through the default rule (`rate(x_total[1m])`); the same counter through docs/how-it-decides.md's fast-reacting rule (`irate` over three scrapes), "+
			"which the stock HPA reads through podpilot's custom metrics API. "+
			"Reaction = step → the Deployment's `spec.replicas` changed (watched); "+
			"its decision part starts when the step's first sample landed in Prometheus (the scrape timestamp of the first raw sample at the new value).",
			e.Cfg.ReactSteps, e.Cfg.ReactSteps, e.Cfg.ScrapeInterval)}
	if err := e.ensureNamespaces(ctx, reactNamespace); err != nil {
		return sec, err
	}
	byGroup := map[string][]workload{}
	byKind := map[kind][]workload{}
	var all []workload
	for _, g := range groups {
		for i := range e.Cfg.ReactSteps {
			w := workload{ns: reactNamespace, name: fmt.Sprintf("%s-%02d", g.prefix, i), metric: g.metric}
			byGroup[g.label] = append(byGroup[g.label], w)
			byKind[g.kind] = append(byKind[g.kind], w)
			all = append(all, w)
			e.Load.Set(w.ns, w.name, 80*baseReplicas)
		}
	}
	if err := e.ensureDeployments(ctx, all, baseReplicas); err != nil {
		return sec, err
	}
	if err := e.waitPrometheusAt(ctx, reactNamespace, 80); err != nil {
		return sec, err
	}
	for k, ws := range byKind {
		if err := e.createAutoscalers(ctx, k, ws); err != nil {
			return sec, err
		}
	}
	defer func() {
		for k := range byKind {
			_ = e.deleteAutoscalers(context.WithoutCancel(ctx), k, []string{reactNamespace})
		}
	}()
	err := framework.PollEvery(ctx, time.Second, 3*time.Minute, "reaction autoscalers active", func(ctx context.Context) (bool, string, error) {
		h, err := e.activeAutoscalers(ctx, kindHPA, []string{reactNamespace})
		if err != nil {
			return false, "", err
		}
		p, err := e.activeAutoscalers(ctx, kindPA, []string{reactNamespace})
		return h == len(byKind[kindHPA]) && p == len(byKind[kindPA]), fmt.Sprintf("%d HPAs, %d PodAutoscalers active", h, p), err
	})
	if err != nil {
		return sec, err
	}
	// One more round so every autoscaler has settled on 2 replicas; a full
	// rate window so the counters' rates read 80.
	if err := sleep(ctx, max(e.Cfg.SyncPeriod, time.Minute)); err != nil {
		return sec, err
	}
	reactions, decisions := e.staggeredSteps(ctx, groups, byGroup)
	return e.reactSection(sec, groups, reactions, decisions)
}

// staggeredSteps steps workload i of each group at i/ReactSteps of the
// scrape interval and returns each group's reaction times in seconds, and the
// part of each after the step's data landed in Prometheus (see firstLanding).
func (e *Env) staggeredSteps(ctx context.Context, groups []reactGroup, byGroup map[string][]workload) (reactions, decisions map[string][]float64) {
	n := e.Cfg.ReactSteps
	stepAt := make([]time.Time, n)
	e.logf("d: %d staggered steps per row over %s", n, e.Cfg.ScrapeInterval)
	for i := range n {
		stepAt[i] = time.Now()
		for _, g := range groups {
			w := byGroup[g.label][i]
			e.Load.Set(w.ns, w.name, 300*baseReplicas)
		}
		if err := sleep(ctx, e.Cfg.ScrapeInterval/time.Duration(n)); err != nil {
			break
		}
	}
	_ = framework.Poll(ctx, 5*time.Minute, "every reaction Deployment resized", func(context.Context) (bool, string, error) {
		done := 0
		for _, ws := range byGroup {
			for i, w := range ws {
				if _, ok := e.Watch.FirstChangeAfter(w.key(), stepAt[i]); ok {
					done++
				}
			}
		}
		return done == len(groups)*n, fmt.Sprintf("%d of %d resized", done, len(groups)*n), nil
	})
	reactions, decisions = map[string][]float64{}, map[string][]float64{}
	for label, ws := range byGroup {
		for i, w := range ws {
			at, ok := e.Watch.FirstChangeAfter(w.key(), stepAt[i])
			if !ok {
				continue
			}
			reactions[label] = append(reactions[label], at.Sub(stepAt[i]).Seconds())
			landed, err := e.firstLanding(ctx, w, stepAt[i], 300)
			if err != nil {
				e.logf("d: %s: %v", w.name, err)
				continue
			}
			decisions[label] = append(decisions[label], at.Sub(landed).Seconds())
		}
	}
	return reactions, decisions
}

func (e *Env) reactSection(sec report.Section, groups []reactGroup, r, decided map[string][]float64) (report.Section, error) {
	t := report.Table{Header: []string{"autoscaler", "metric", "steps resized", "median s", "× HPA", "p90 s", "worst s", "× HPA", "best s",
		"decision part median s", "× HPA", "decision part worst s"}}
	for i, g := range groups {
		h := groups[i/2*2] // the stock HPA on the same rule
		hs, hd := stats.Summarize(r[h.label]), stats.Summarize(decided[h.label])
		s, d := stats.Summarize(r[g.label]), stats.Summarize(decided[g.label])
		t.Rows = append(t.Rows, []string{g.label, "`" + g.metric + "`", fmt.Sprintf("%d/%d", s.N, e.Cfg.ReactSteps), stats.Num(s.P50, 1), stats.Ratio(s.P50, hs.P50),
			stats.Num(s.P90, 1), stats.Num(s.Max, 1), stats.Ratio(s.Max, hs.Max), stats.Num(s.Min, 1),
			stats.Num(d.P50, 2), stats.Ratio(d.P50, hd.P50), stats.Num(d.Max, 2)})
	}
	sec.Tables = append(sec.Tables, t)
	sec.Notes = append(sec.Notes, "× HPA compares each row with the stock HPA on the same rule (the row above a PodAutoscaler's). "+
		"The last headline line compares across rules, the PodAutoscaler on the fast rule with the stock HPA on the default one: what switching both the autoscaler and the rule gives, not the autoscaler alone.")
	sec.Headline = reactHeadline(groups, r, decided)
	samples := make([]svg.Sample, 0, len(groups))
	for _, g := range groups {
		samples = append(samples, svg.Sample{Name: g.label, Values: r[g.label]})
	}
	img, err := e.writeSVG("reaction", svg.CDF{
		Title:    "step → spec.replicas changed",
		Subtitle: fmt.Sprintf("%d steps per row, phases spread over the %s scrape interval", e.Cfg.ReactSteps, e.Cfg.ScrapeInterval),
		XLabel:   "reaction time (s)",
		Samples:  samples,
	}.Render())
	if err != nil {
		return sec, err
	}
	sec.Images = append(sec.Images, img)
	return sec, nil
}

// reactHeadline states each pair's ratio on its own rule, the gauge's decision
// part, and, labelled as such, the fast rule's PodAutoscaler against the stock
// HPA on the counter's default rule.
func reactHeadline(groups []reactGroup, r, decided map[string][]float64) []string {
	var out []string
	for i := 0; i+1 < len(groups); i += 2 {
		h, p := stats.Summarize(r[groups[i].label]), stats.Summarize(r[groups[i+1].label])
		out = append(out, fmt.Sprintf("d. reaction step → replicas changed, same rule `%s`: PodAutoscaler median %s s = %s the stock HPA's %s s; worst %s s = %s the HPA's %s s",
			groups[i].metric, stats.Num(p.P50, 1), stats.Ratio(p.P50, h.P50), stats.Num(h.P50, 1), stats.Num(p.Max, 1), stats.Ratio(p.Max, h.Max), stats.Num(h.Max, 1)))
		if i == 0 {
			hd, pd := stats.Summarize(decided[groups[0].label]), stats.Summarize(decided[groups[1].label])
			out = append(out, fmt.Sprintf("d. decision part on the gauge (step's data landed in Prometheus → replicas changed): PodAutoscaler median %s s = %s the stock HPA's %s s",
				stats.Num(pd.P50, 2), stats.Ratio(pd.P50, hd.P50), stats.Num(hd.P50, 2)))
		}
	}
	if len(groups) == ReactRows {
		hr, pf := stats.Summarize(r[groups[2].label]), stats.Summarize(r[groups[5].label])
		out = append(out, fmt.Sprintf("d. across rules (autoscaler and rule both switched): %s median %s s = %s the %s's %s s; worst %s s = %s",
			groups[5].label, stats.Num(pf.P50, 1), stats.Ratio(pf.P50, hr.P50), groups[2].label, stats.Num(hr.P50, 1), stats.Num(pf.Max, 1), stats.Ratio(pf.Max, hr.Max)))
	}
	return out
}
