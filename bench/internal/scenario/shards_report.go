package scenario

import (
	"fmt"
	"strings"

	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/bench/internal/stats"
)

// ShardSection renders scenario s; bySize holds scenario c's phases when c
// ran in the same run (its single-replica step is the comparison).
func (e *Env) ShardSection(run ShardRun, bySize map[int][]Phase) report.Section {
	sec := report.Section{Title: "s. The autoscaler sharded over 3 replicas",
		Intro: fmt.Sprintf("Scenario c's N=%d Deployments (%d pods each) and PodAutoscalers, run by %d podpilots started together as host processes with "+
			"`--autoscaler-shards=%d` and podpilot's leader election defaults (`--leader-elect-lease-duration=15s`, `-renew-deadline=10s`, "+
			"`-retry-period=2s`: bucket Leases `%s-<i>` in %s); the bench's own podpilot keeps the metrics APIServices with `--autoscaler-enabled=false`. "+
			"Spread = buckets held per replica. Steady state over %d sync periods, per replica: RSS, CPU per round, "+
			"`podpilot_horizontal_pod_autoscaler_controller_reconciliations_total` per second, the longest round (≤, from "+
			"`podpilot_autoscaler_round_duration_seconds`) and the queue wait p99 (≤). Then three steps, each waited out until every Deployment runs "+
			"what it asks for: %s. Per step: step → each Deployment's first `spec.replicas` change (the bench's watch), split by whether its "+
			"PodAutoscaler's bucket moved (after the SIGKILL: the killed replica's buckets; in the rolling restart: a holder change, or an unheld "+
			"spell, between the step and that Deployment's resize). Rescaled by ≥ 2 = PodAutoscalers that two or more processes logged "+
			"`\"Rescaled\"` for in the step (in the rolling restart a restarted replica is a new process, so a handover in between may count); "+
			"rescales logged = those lines in all, against scale changes = Deployments by the number of `spec.replicas` changes from the step until at rest "+
			"(more than one per Deployment when the scale-up policy, 100%% per period by default, splits a step; a double scale adds logged rescales "+
			"that change nothing or changes no single owner made).",
			run.n, e.podsPerTarget(), ShardReplicas, run.shards, leaseName, leaseNamespace, e.Cfg.Rounds, stepsString(run.steps))}
	rt := report.Table{Caption: fmt.Sprintf("steady state, spread %s after %s s, every PodAutoscaler active after %s s",
		run.spread, stats.Num(run.spreadAfter.Seconds(), 1), stats.Num(run.activeAfter.Seconds(), 1)),
		Header: []string{"replica", "buckets", "RSS MiB", "CPU s/round", "reconciliations/s", "longest round s (≤)", "queue wait p99 s (≤)"}}
	var tot replicaStat
	for _, r := range run.replicas {
		rt.Rows = append(rt.Rows, []string{shortID(r.id), fmt.Sprint(r.buckets), stats.Num(r.rssMiB, 0), stats.Num(r.cpuPerRound, 2),
			stats.Num(r.reconcilesPerSec, 1), stats.Num(r.roundMax, 3), stats.Num(r.queueWaitP99, 3)})
		tot.buckets += r.buckets
		tot.rssMiB += r.rssMiB
		tot.cpuPerRound += r.cpuPerRound
		tot.reconcilesPerSec += r.reconcilesPerSec
		tot.roundMax = max(tot.roundMax, r.roundMax)
		tot.queueWaitP99 = max(tot.queueWaitP99, r.queueWaitP99)
	}
	rt.Rows = append(rt.Rows, []string{"all (sum; max)", fmt.Sprint(tot.buckets), stats.Num(tot.rssMiB, 0), stats.Num(tot.cpuPerRound, 2),
		stats.Num(tot.reconcilesPerSec, 1), stats.Num(tot.roundMax, 3), stats.Num(tot.queueWaitP99, 3)})
	st := report.Table{Caption: "steps", Header: []string{"step", "load per pod", "first s", "last s", "resized", "buckets moved",
		"moved: PAs, p50 s, max s", "fixed: PAs, p50 s, max s", "rescaled by ≥ 2", "rescales logged", "scale changes (changes: Deployments)"}}
	for _, s := range run.steps {
		st.Rows = append(st.Rows, []string{s.name, fmt.Sprintf("%d → %d", s.from, s.to), stats.Num(s.first.Seconds(), 1),
			stats.Num(s.last.Seconds(), 1), fmt.Sprintf("%d/%d", s.resized, s.n), fmt.Sprint(s.movedBuckets),
			summary(s.moved), summary(s.fixed), fmt.Sprintf("%d of %d", len(s.rescalers.byTwoOrMore), s.rescalers.rescaled),
			fmt.Sprint(s.rescalers.lines), formatChangeHistogram(s.changes)})
		if len(s.rescalers.byTwoOrMore) > 0 {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s: rescaled by two or more processes: %s.", s.name, firstN(s.rescalers.byTwoOrMore, 10)))
		}
	}
	sec.Tables = []report.Table{rt, st}
	sec.Notes = append(sec.Notes, fmt.Sprintf("API requests/s in the steady window (every client): %s. Takeover after the SIGKILL: %s s to %s "+
		"(lease 15 s + retry 2 s); the killed replica, started again, held its share after %s s. Rolling restart (each replica SIGTERMed, started again, "+
		"ready, and the buckets even again before the next): %s s from the step.", stats.Num(run.apiRequestsPerSec, 0), stats.Num(run.takeover.Seconds(), 1),
		run.takeoverSpread, stats.Num(run.rejoin.Seconds(), 1), stats.Num(run.restartTook.Seconds(), 1)))
	sec.Headline = shardHeadline(run, find(bySize[run.n], kindPA))
	return sec
}

// shardHeadline compares the first step with scenario c's single replica
// (c, when it ran) and states the takeover and the double scales.
func shardHeadline(run ShardRun, c *Phase) []string {
	if len(run.steps) == 0 {
		return nil
	}
	s0 := run.steps[0]
	line := fmt.Sprintf("s. N=%d over %d replicas × %d buckets: spread %s after %s s; step 100 → %d: last Deployment resized after %s s",
		run.n, ShardReplicas, run.shards, run.spread, stats.Num(run.spreadAfter.Seconds(), 1), s0.to, stats.Num(s0.last.Seconds(), 0))
	if c != nil {
		line += fmt.Sprintf(" = %s scenario c's single replica (%s s)", stats.Ratio(s0.last.Seconds(), c.last.Seconds()), stats.Num(c.last.Seconds(), 0))
	}
	out := []string{line}
	if len(run.steps) > 1 {
		k := run.steps[1]
		out = append(out, fmt.Sprintf("s. SIGKILL of one replica: its %d buckets held by the others after %s s (lease 15 s); step → resize p50 %s s in moved buckets "+
			"against %s s in fixed ones; %d PodAutoscalers rescaled by two replicas", k.movedBuckets, stats.Num(run.takeover.Seconds(), 1),
			stats.Num(stats.Summarize(k.moved).P50, 1), stats.Num(stats.Summarize(k.fixed).P50, 1), len(k.rescalers.byTwoOrMore)))
	}
	if len(run.steps) > 2 {
		r := run.steps[2]
		line := fmt.Sprintf("s. Rolling restart under a step (%s s): step → resize p50 %s s (max %s) for the %d PodAutoscalers whose bucket moved before their resize, ",
			stats.Num(run.restartTook.Seconds(), 1), stats.Num(stats.Summarize(r.moved).P50, 1), stats.Num(stats.Summarize(r.moved).Max, 1), len(r.moved))
		if len(r.fixed) > 0 {
			line += fmt.Sprintf("%s s (max %s) for the %d others", stats.Num(stats.Summarize(r.fixed).P50, 1), stats.Num(stats.Summarize(r.fixed).Max, 1), len(r.fixed))
		} else {
			line += fmt.Sprintf("none resized before its bucket moved; with every replica up (first step) p50 %s s (max %s)",
				stats.Num(stats.Summarize(s0.fixed).P50, 1), stats.Num(stats.Summarize(s0.fixed).Max, 1))
		}
		out = append(out, line)
	}
	return out
}

func summary(v []float64) string {
	s := stats.Summarize(v)
	if s.N == 0 {
		return "0"
	}
	return fmt.Sprintf("%d, %s, %s", s.N, stats.Num(s.P50, 1), stats.Num(s.Max, 1))
}

func stepsString(steps []shardStep) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = fmt.Sprintf("%s (%d → %d per pod)", s.name, s.from, s.to)
	}
	if len(parts) == 0 {
		return "none ran"
	}
	return strings.Join(parts, "; ")
}

// shortID shortens a holder identity (host_uuid) to its UUID's first block.
func shortID(id string) string {
	if i := strings.LastIndex(id, "_"); i >= 0 && len(id)-i > 8 {
		return id[i+1 : i+9]
	}
	return id
}

func firstN(s []string, n int) string {
	if len(s) > n {
		return strings.Join(s[:n], ", ") + fmt.Sprintf(" and %d more", len(s)-n)
	}
	return strings.Join(s, ", ")
}
