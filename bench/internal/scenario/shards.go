package scenario

import (
	"context"
	"fmt"
	"math"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// ShardReplicas is how many sharded podpilots scenario s runs.
const ShardReplicas = 3

// ShardRun is scenario s at one N.
type ShardRun struct {
	n, shards int
	// spreadAfter is from starting the replicas until the buckets were spread
	// evenly (spread, e.g. "2/2/2"); activeAfter until every PodAutoscaler read its metric.
	spreadAfter, activeAfter time.Duration
	spread                   string
	// Steady state over rounds sync periods, per replica.
	rounds            float64
	replicas          []replicaStat
	apiRequestsPerSec float64
	// steps are the load step, the step after the SIGKILL and the step under the rolling restart.
	steps []shardStep
	// takeover is from the SIGKILL until the killed replica's buckets were held
	// by the others, spread evenly (takeoverSpread); rejoin until the killed
	// replica, started again, held its share.
	takeover, rejoin time.Duration
	takeoverSpread   string
	// restartTook is the rolling restart, from the step (and the first SIGTERM)
	// until the buckets were even again after the last replica's restart.
	restartTook time.Duration
}

// replicaStat is one replica in the steady window.
type replicaStat struct {
	id                                       string
	buckets                                  int
	rssMiB, cpuPerRound                      float64
	reconcilesPerSec, roundMax, queueWaitP99 float64
}

// shardStep is one load step of scenario s.
type shardStep struct {
	name     string
	from, to int // per pod
	// Step → each Deployment's first spec.replicas change, in seconds, split by
	// whether its PodAutoscaler's bucket moved (moved) or not (fixed).
	moved, fixed  []float64
	movedBuckets  int
	first, last   time.Duration
	resized, n    int
	rescalers     rescalerCount
	changes       map[int]int
	changesWindow time.Duration
}

// shardLevels are scenario s's three per-pod loads: StepTo (scenario c's
// step), then two steps of a quarter more each (well past the 10%
// tolerance, and within one scale-up period's 100% so that each is one
// change per Deployment).
func shardLevels(stepTo int) [3]int {
	l2 := (stepTo*5 + 3) / 4
	return [3]int{stepTo, l2, (l2*5 + 3) / 4}
}

// ShardPods is the most pods per Deployment scenario s asks for: its last
// level's, at podsPerTarget pods before the steps.
func ShardPods(stepTo, podsPerTarget int) int {
	l := shardLevels(stepTo)
	return int(math.Ceil(float64(l[2]*podsPerTarget) / targetPerPod))
}

// Shards runs scenario s at n: the n Deployments of scenario c with one
// PodAutoscaler each, run by ShardReplicas podpilots with
// --autoscaler-shards; a load step, a SIGKILL of one replica under a
// second step, and a rolling restart under a third.
func (e *Env) Shards(ctx context.Context, n int) (ShardRun, error) {
	run := ShardRun{n: n, shards: e.shards()}
	ws, nss, err := e.shardSetup(ctx, n)
	if err != nil {
		return run, err
	}
	e.logf("s N=%d: the bench podpilot's autoscaler off; creating the PodAutoscalers", n)
	if err := e.benchPodpilotAutoscaler(ctx, false); err != nil {
		return run, err
	}
	defer func() {
		if err := e.benchPodpilotAutoscaler(context.WithoutCancel(ctx), true); err != nil {
			e.logf("s: restore the bench podpilot: %v", err)
		}
	}()
	if err := e.createShardAutoscalers(ctx, ws); err != nil {
		return run, err
	}
	defer func() {
		if err := e.deleteAutoscalers(context.WithoutCancel(ctx), kindPA, nss); err != nil {
			e.logf("%v", err)
		}
	}()
	rs, err := e.startReplicas(ctx, &run, nss)
	defer func() {
		for _, r := range rs {
			r.p.Stop()
		}
	}()
	if err != nil {
		return run, err
	}
	if err := e.shardSteady(ctx, &run, rs); err != nil {
		return run, err
	}
	levels := shardLevels(e.stepTo())
	st, err := e.plainStep(ctx, rs, ws, targetPerPod, levels[0])
	run.steps = append(run.steps, st)
	if err != nil {
		return run, err
	}
	st, err = e.killStep(ctx, &run, rs, ws, levels[0], levels[1])
	run.steps = append(run.steps, st)
	if err != nil {
		return run, err
	}
	st, err = e.restartStep(ctx, &run, rs, ws, levels[1], levels[2])
	run.steps = append(run.steps, st)
	return run, err
}

// shardSetup creates scenario c's n Deployments (if c has not) and resets
// them to podsPerTarget pods at the target.
func (e *Env) shardSetup(ctx context.Context, n int) ([]workload, []string, error) {
	nss := make([]string, e.Cfg.Namespaces)
	for i := range nss {
		nss[i] = e.namespace(i)
	}
	if err := e.ensureNamespaces(ctx, nss...); err != nil {
		return nil, nil, err
	}
	ws := e.benchWorkloads(n)
	e.logf("s N=%d: %d Deployments of %d pods", n, n, e.podsPerTarget())
	// Scenario c leaves its Deployments where its step took them: create the
	// missing ones and scale every one back before waiting for the pods.
	if err := e.createDeployments(ctx, ws, int32(e.podsPerTarget())); err != nil {
		return nil, nil, err
	}
	for _, w := range ws {
		e.Load.Set(w.ns, w.name, float64(targetPerPod*e.podsPerTarget()))
	}
	if err := e.scaleTo(ctx, ws, int32(e.podsPerTarget())); err != nil {
		return nil, nil, err
	}
	return ws, nss, e.waitPrometheusAt(ctx, benchNSPrefix+"n[0-9]+", targetPerPod)
}

// createShardAutoscalers creates scenario c's PodAutoscalers with room for
// scenario s's last level.
func (e *Env) createShardAutoscalers(ctx context.Context, ws []workload) error {
	maxR := max(e.maxFor(), int32(ShardPods(e.stepTo(), e.podsPerTarget())))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, w := range ws {
		g.Go(func() error {
			pa := e.podAutoscalerFor(w)
			pa.Spec.MaxReplicas = maxR
			if _, err := e.PP.AutoscalingV1alpha1().PodAutoscalers(w.ns).Create(gctx, pa, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create PodAutoscaler %s: %w", w.key(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// startReplicas starts ShardReplicas podpilots together and waits until
// the buckets are spread evenly and every PodAutoscaler is active.
func (e *Env) startReplicas(ctx context.Context, run *ShardRun, nss []string) ([]*replica, error) {
	t0 := time.Now()
	var rs []*replica
	for range ShardReplicas {
		r, err := e.startReplica()
		if err != nil {
			return rs, err
		}
		rs = append(rs, r)
	}
	for _, r := range rs {
		if err := e.ready(ctx, r); err != nil {
			return rs, err
		}
	}
	e.logf("s N=%d: %d replicas ready after %s; waiting for the buckets to spread", run.n, len(rs), time.Since(t0).Round(time.Millisecond))
	holders, err := e.waitEven(ctx, rs, 2*time.Minute)
	if err != nil {
		return rs, err
	}
	run.spreadAfter, run.spread = time.Since(t0), spreadString(holders, ids(rs))
	timeout := 3*time.Minute + time.Duration(run.n)*200*time.Millisecond
	err = framework.PollEvery(ctx, 2*time.Second, timeout, fmt.Sprintf("%d PodAutoscalers reading their metric", run.n), func(ctx context.Context) (bool, string, error) {
		a, err := e.activeAutoscalers(ctx, kindPA, nss)
		return a == run.n, fmt.Sprintf("%d active", a), err
	})
	run.activeAfter = time.Since(t0)
	return rs, err
}

// shardSteady measures Rounds sync periods of the steady state on each replica.
func (e *Env) shardSteady(ctx context.Context, run *ShardRun, rs []*replica) error {
	window := time.Duration(e.Cfg.Rounds) * e.Cfg.SyncPeriod
	e.logf("s N=%d: steady state for %s", run.n, window)
	holders, err := e.bucketHolders(ctx)
	if err != nil {
		return err
	}
	a0, err := e.Metrics(ctx, "apiserver")
	if err != nil {
		return err
	}
	t0 := time.Now()
	before := make([]replicaScrape, len(rs))
	for i, r := range rs {
		if before[i], err = scrapeReplica(ctx, r); err != nil {
			return err
		}
	}
	if err := sleep(ctx, window); err != nil {
		return err
	}
	secs := time.Since(t0).Seconds()
	run.rounds = secs / e.Cfg.SyncPeriod.Seconds()
	counts, _ := bucketCounts(holders, ids(rs))
	for i, r := range rs {
		after, err := scrapeReplica(ctx, r)
		if err != nil {
			return err
		}
		st := after.since(before[i], secs, run.rounds)
		st.id, st.buckets = r.id, counts[i]
		rss, _ := r.p.RSS()
		st.rssMiB = float64(rss) / (1 << 20)
		run.replicas = append(run.replicas, st)
	}
	a1, err := e.Metrics(ctx, "apiserver")
	if err != nil {
		return err
	}
	run.apiRequestsPerSec = (a1.Sum("apiserver_request_total", nil) - a0.Sum("apiserver_request_total", nil)) / secs
	return nil
}
