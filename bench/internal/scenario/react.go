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

// React runs scenario d: ReactSteps Deployments per kind at 80 per pod
// (2 pods, target 100), each stepped to 300 per pod at an offset spread
// evenly over one scrape interval, and the time from each step to its
// Deployment's spec.replicas changing, the stock HPA and PodAutoscalers side
// by side in the same window.
func (e *Env) React(ctx context.Context) (report.Section, error) {
	sec := report.Section{Title: "d. Reaction time",
		Intro: fmt.Sprintf("%d Deployments per autoscaler kind (2 pods, per-pod gauge at 80 against a target of 100) in one namespace; "+
			"step *i* sets Deployment *i* of each kind to 300 per pod at *i*/%d of the %s scrape interval, so the steps' phase covers the "+
			"scrape and sync periods. Reaction = step → the Deployment's `spec.replicas` changed (watched); "+
			"its decision part starts when the step's first sample landed in Prometheus (the scrape timestamp of the first raw sample at the new value).",
			e.Cfg.ReactSteps, e.Cfg.ReactSteps, e.Cfg.ScrapeInterval)}
	if err := e.ensureNamespaces(ctx, reactNamespace); err != nil {
		return sec, err
	}
	byKind := map[kind][]workload{}
	var all []workload
	for _, k := range []kind{kindHPA, kindPA} {
		for i := range e.Cfg.ReactSteps {
			w := workload{ns: reactNamespace, name: fmt.Sprintf("r-%s-%02d", map[kind]string{kindHPA: "hpa", kindPA: "pa"}[k], i)}
			byKind[k] = append(byKind[k], w)
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
	for _, k := range []kind{kindHPA, kindPA} {
		if err := e.createAutoscalers(ctx, k, byKind[k]); err != nil {
			return sec, err
		}
	}
	defer func() {
		for _, k := range []kind{kindHPA, kindPA} {
			_ = e.deleteAutoscalers(context.WithoutCancel(ctx), k, []string{reactNamespace})
		}
	}()
	err := framework.PollEvery(ctx, time.Second, 3*time.Minute, "reaction autoscalers active", func(ctx context.Context) (bool, string, error) {
		h, err := e.activeAutoscalers(ctx, kindHPA, []string{reactNamespace})
		if err != nil {
			return false, "", err
		}
		p, err := e.activeAutoscalers(ctx, kindPA, []string{reactNamespace})
		return h == e.Cfg.ReactSteps && p == e.Cfg.ReactSteps, fmt.Sprintf("%d HPAs, %d PodAutoscalers active", h, p), err
	})
	if err != nil {
		return sec, err
	}
	// One more round so every autoscaler has settled on 2 replicas.
	if err := sleep(ctx, e.Cfg.SyncPeriod); err != nil {
		return sec, err
	}
	reactions, decisions := e.staggeredSteps(ctx, byKind)
	return e.reactSection(sec, reactions, decisions)
}

// staggeredSteps steps workload i of each kind at i/ReactSteps of the scrape
// interval and returns each kind's reaction times in seconds, and the part
// of each after the step's data landed in Prometheus (see firstLanding).
func (e *Env) staggeredSteps(ctx context.Context, byKind map[kind][]workload) (reactions, decisions map[kind][]float64) {
	n := e.Cfg.ReactSteps
	stepAt := make([]time.Time, n)
	e.logf("d: %d staggered steps per kind over %s", n, e.Cfg.ScrapeInterval)
	for i := range n {
		stepAt[i] = time.Now()
		for _, k := range []kind{kindHPA, kindPA} {
			w := byKind[k][i]
			e.Load.Set(w.ns, w.name, 300*baseReplicas)
		}
		if err := sleep(ctx, e.Cfg.ScrapeInterval/time.Duration(n)); err != nil {
			break
		}
	}
	_ = framework.Poll(ctx, 5*time.Minute, "every reaction Deployment resized", func(context.Context) (bool, string, error) {
		done := 0
		for _, ws := range byKind {
			for i, w := range ws {
				if _, ok := e.Watch.FirstChangeAfter(w.key(), stepAt[i]); ok {
					done++
				}
			}
		}
		return done == 2*n, fmt.Sprintf("%d of %d resized", done, 2*n), nil
	})
	reactions, decisions = map[kind][]float64{}, map[kind][]float64{}
	for k, ws := range byKind {
		for i, w := range ws {
			at, ok := e.Watch.FirstChangeAfter(w.key(), stepAt[i])
			if !ok {
				continue
			}
			reactions[k] = append(reactions[k], at.Sub(stepAt[i]).Seconds())
			landed, err := e.firstLanding(ctx, w, stepAt[i], 300)
			if err != nil {
				e.logf("d: %s: %v", w.name, err)
				continue
			}
			decisions[k] = append(decisions[k], at.Sub(landed).Seconds())
		}
	}
	return reactions, decisions
}

func (e *Env) reactSection(sec report.Section, r, decided map[kind][]float64) (report.Section, error) {
	h := stats.Summarize(r[kindHPA])
	t := report.Table{Header: []string{"autoscaler", "steps resized", "median s", "× HPA", "p90 s", "worst s", "× HPA", "best s"}}
	for _, k := range []kind{kindHPA, kindPA} {
		s := stats.Summarize(r[k])
		t.Rows = append(t.Rows, []string{string(k), fmt.Sprintf("%d/%d", s.N, e.Cfg.ReactSteps), stats.Num(s.P50, 1), stats.Ratio(s.P50, h.P50),
			stats.Num(s.P90, 1), stats.Num(s.Max, 1), stats.Ratio(s.Max, h.Max), stats.Num(s.Min, 1)})
	}
	sec.Tables = append(sec.Tables, t)
	hd := stats.Summarize(decided[kindHPA])
	dt := report.Table{Header: []string{"autoscaler", "data landed → replicas changed: median s", "× HPA", "p90 s", "worst s", "best s"}}
	for _, k := range []kind{kindHPA, kindPA} {
		s := stats.Summarize(decided[k])
		dt.Rows = append(dt.Rows, []string{string(k), stats.Num(s.P50, 2), stats.Ratio(s.P50, hd.P50), stats.Num(s.P90, 2), stats.Num(s.Max, 2), stats.Num(s.Min, 2)})
	}
	sec.Tables = append(sec.Tables, dt)
	pd := stats.Summarize(decided[kindPA])
	pa := stats.Summarize(r[kindPA])
	sec.Headline = []string{fmt.Sprintf("d. reaction step → replicas changed: PodAutoscaler median %s s = %s the stock HPA's %s s; worst %s s = %s the HPA's %s s",
		stats.Num(pa.P50, 1), stats.Ratio(pa.P50, h.P50), stats.Num(h.P50, 1), stats.Num(pa.Max, 1), stats.Ratio(pa.Max, h.Max), stats.Num(h.Max, 1)),
		fmt.Sprintf("d. decision part (step's data landed in Prometheus → replicas changed): PodAutoscaler median %s s = %s the stock HPA's %s s",
			stats.Num(pd.P50, 2), stats.Ratio(pd.P50, hd.P50), stats.Num(hd.P50, 2))}
	img, err := e.writeSVG("reaction", svg.CDF{
		Title:    "step → spec.replicas changed",
		Subtitle: fmt.Sprintf("%d steps per kind, phases spread over the %s scrape interval", e.Cfg.ReactSteps, e.Cfg.ScrapeInterval),
		XLabel:   "reaction time (s)",
		Samples:  []svg.Sample{{Name: string(kindHPA), Values: r[kindHPA]}, {Name: string(kindPA), Values: r[kindPA]}},
	}.Render())
	if err != nil {
		return sec, err
	}
	sec.Images = append(sec.Images, img)
	return sec, nil
}
