package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/bench/internal/promtext"
	"github.com/podpilot/podpilot/bench/internal/stats"
	"github.com/podpilot/podpilot/pkg/autoscaler/shard"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// replicaScrape is one replica's counters at one moment.
type replicaScrape struct {
	cpu time.Duration
	m   promtext.Families
}

func scrapeReplica(ctx context.Context, r *replica) (replicaScrape, error) {
	m, err := r.metrics(ctx)
	return replicaScrape{cpu: r.cpu(), m: m}, err
}

// since returns the replica's steady-window figures between before and s.
func (s replicaScrape) since(before replicaScrape, secs, rounds float64) replicaStat {
	rec := "podpilot_" + reconciliations
	return replicaStat{
		cpuPerRound:      (s.cpu - before.cpu).Seconds() / rounds,
		reconcilesPerSec: (s.m.Sum(rec, nil) - before.m.Sum(rec, nil)) / secs,
		roundMax:         s.m.HistogramMaxBound(before.m, roundHistogram, nil),
		queueWaitP99:     s.m.HistogramQuantileBound(before.m, queueWait, map[string]string{"name": "podpilot-autoscaler"}, 0.99),
	}
}

// setLoad sets every workload to perPod per pod (of podsPerTarget pods).
func (e *Env) setLoad(ws []workload, perPod int) {
	for _, w := range ws {
		e.Load.Set(w.ns, w.name, float64(perPod*e.podsPerTarget()))
	}
}

// waitResized waits until every Deployment's spec.replicas changed after t0
// (a timeout is reported in the step's resized count, not as an error) and
// returns when each did.
func (e *Env) waitResized(ctx context.Context, ws []workload, t0 time.Time) map[string]time.Time {
	timeout := 3*time.Minute + time.Duration(len(ws))*1300*time.Millisecond
	_ = framework.Poll(ctx, timeout, "every Deployment resized", func(context.Context) (bool, string, error) {
		done := 0
		for _, w := range ws {
			if _, ok := e.Watch.FirstChangeAfter(w.key(), t0); ok {
				done++
			}
		}
		return done == len(ws), fmt.Sprintf("%d of %d resized", done, len(ws)), nil
	})
	out := map[string]time.Time{}
	for _, w := range ws {
		if at, ok := e.Watch.FirstChangeAfter(w.key(), t0); ok {
			out[w.key()] = at
		}
	}
	return out
}

// waitSettled waits until every Deployment runs as many pods as it asks for
// and none changed for a sync period, so that the next step starts from rest.
func (e *Env) waitSettled(ctx context.Context, ws []workload) error {
	pods := 0
	for _, w := range ws {
		pods += len(e.Watch.RunningPods(w.ns, w.name))
	}
	timeout := 2*time.Minute + time.Duration(pods)*300*time.Millisecond
	return framework.PollEvery(ctx, 2*time.Second, timeout, "every Deployment at rest", func(ctx context.Context) (bool, string, error) {
		want, err := e.specReplicas(ctx, ws)
		if err != nil {
			return false, "", err
		}
		now := time.Now()
		off, changing := 0, 0
		for _, w := range ws {
			if r, ok := want[w.key()]; !ok || len(e.Watch.RunningPods(w.ns, w.name)) != int(r) {
				off++
			}
			if e.Watch.ChangesWithin(w.key(), now.Add(-e.Cfg.SyncPeriod), now) > 0 {
				changing++
			}
		}
		return off == 0 && changing == 0, fmt.Sprintf("%d short of pods, %d changed within a sync period", off, changing), nil
	})
}

// specReplicas returns the spec.replicas of the bench Deployments in ws's namespaces, by ns/name.
func (e *Env) specReplicas(ctx context.Context, ws []workload) (map[string]int32, error) {
	out := map[string]int32{}
	seen := map[string]bool{}
	for _, w := range ws {
		if seen[w.ns] {
			continue
		}
		seen[w.ns] = true
		l, err := e.Cluster.Client.AppsV1().Deployments(w.ns).List(ctx, metav1.ListOptions{LabelSelector: benchLabel + "=1"})
		if err != nil {
			return nil, fmt.Errorf("list deployments in %s: %w", w.ns, err)
		}
		for _, d := range l.Items {
			if d.Spec.Replicas != nil {
				out[d.Namespace+"/"+d.Name] = *d.Spec.Replicas
			}
		}
	}
	return out, nil
}

// finish fills step from the resize times since t0 (moved says whether a
// workload's bucket moved before it was resized), the rescales the processes
// logged from t0 until now, and the Deployments' scale history over the same window.
func (e *Env) finish(step *shardStep, ws []workload, t0 time.Time, at map[string]time.Time, moved func(workload, time.Time) bool, logs []map[string]int) {
	step.n, step.resized = len(ws), len(at)
	var all []float64
	for _, w := range ws {
		t, ok := at[w.key()]
		if !ok {
			continue
		}
		d := t.Sub(t0).Seconds()
		all = append(all, d)
		if moved(w, t) {
			step.moved = append(step.moved, d)
		} else {
			step.fixed = append(step.fixed, d)
		}
	}
	s := stats.Summarize(all)
	step.first, step.last = secondsDuration(s.Min), secondsDuration(s.Max)
	step.rescalers = countRescalers(logs)
	end := time.Now()
	changes := make([]int, len(ws))
	for i, w := range ws {
		changes[i] = e.Watch.ChangesWithin(w.key(), t0, end)
	}
	step.changes, step.changesWindow = changeHistogram(changes), end.Sub(t0)
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// rescalesSince returns the rescales each of rs logged since its offset.
func rescalesSince(rs []*replica, offsets []int64) []map[string]int {
	out := make([]map[string]int, len(rs))
	for i, r := range rs {
		out[i] = r.rescalesSince(offsets[i])
	}
	return out
}

func logSizes(rs []*replica) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.logSize()
	}
	return out
}

// plainStep steps every workload from → to with every replica up.
func (e *Env) plainStep(ctx context.Context, rs []*replica, ws []workload, from, to int) (shardStep, error) {
	step := shardStep{name: "load step, 3 replicas up", from: from, to: to}
	offsets := logSizes(rs)
	t0 := time.Now()
	e.setLoad(ws, to)
	e.logf("s: stepped %d → %d per pod", from, to)
	at := e.waitResized(ctx, ws, t0)
	err := e.waitSettled(ctx, ws)
	e.finish(&step, ws, t0, at, func(workload, time.Time) bool { return false }, rescalesSince(rs, offsets))
	return step, err
}

// killStep SIGKILLs the last replica and steps every workload from → to at
// once; after the step it starts the replica again.
func (e *Env) killStep(ctx context.Context, run *ShardRun, rs []*replica, ws []workload, from, to int) (shardStep, error) {
	step := shardStep{name: "SIGKILL of one replica, then a step", from: from, to: to}
	holders, err := e.bucketHolders(ctx)
	if err != nil {
		return step, err
	}
	victim, survivors := rs[len(rs)-1], rs[:len(rs)-1]
	movedBuckets := map[int]bool{}
	for b, h := range holders {
		if h == victim.id {
			movedBuckets[b] = true
		}
	}
	step.movedBuckets = len(movedBuckets)
	offsets := logSizes(survivors)
	if err := victim.p.Kill(); err != nil {
		return step, err
	}
	tk := time.Now()
	e.setLoad(ws, to)
	e.logf("s: SIGKILLed %s (%d buckets) and stepped %d → %d per pod", victim.id, len(movedBuckets), from, to)
	after, err := e.waitEven(ctx, survivors, 3*time.Minute)
	if err != nil {
		return step, err
	}
	run.takeover, run.takeoverSpread = time.Since(tk), spreadString(after, ids(survivors))
	at := e.waitResized(ctx, ws, tk)
	err = e.waitSettled(ctx, ws)
	e.finish(&step, ws, tk, at, func(w workload, _ time.Time) bool {
		return movedBuckets[shard.Bucket(w.ns, w.name, e.shards())]
	}, rescalesSince(survivors, offsets))
	if err != nil {
		return step, err
	}
	t0 := time.Now()
	r, err := e.startReplica()
	if err != nil {
		return step, err
	}
	rs[len(rs)-1] = r
	if err := e.ready(ctx, r); err != nil {
		return step, err
	}
	if _, err := e.waitEven(ctx, rs, 3*time.Minute); err != nil {
		return step, err
	}
	run.rejoin = time.Since(t0)
	return step, nil
}

// restartStep steps every workload from → to and restarts every replica in
// turn (SIGTERM, start again, wait ready and for the buckets to be even again), recording the bucket holders all
// along to tell the PodAutoscalers whose bucket moved before they were
// resized from the others.
func (e *Env) restartStep(ctx context.Context, run *ShardRun, rs []*replica, ws []workload, from, to int) (shardStep, error) {
	step := shardStep{name: "rolling restart of every replica under a step", from: from, to: to}
	stop := e.sampleHolders(ctx)
	defer stop()
	old := append([]*replica(nil), rs...)
	offsets := logSizes(old)
	tr := time.Now()
	e.setLoad(ws, to)
	e.logf("s: stepped %d → %d per pod; restarting the %d replicas in turn", from, to, len(rs))
	for i := range rs {
		rs[i].p.Stop()
		r, err := e.startReplica()
		if err != nil {
			return step, err
		}
		rs[i] = r
		if err := e.ready(ctx, r); err != nil {
			return step, err
		}
		// As a rollout that waits for the restarted replica to hold its share.
		if _, err := e.waitEven(ctx, rs, 3*time.Minute); err != nil {
			return step, err
		}
	}
	run.restartTook = time.Since(tr)
	at := e.waitResized(ctx, ws, tr)
	tl := stop()
	err := e.waitSettled(ctx, ws)
	logs := append(rescalesSince(old, offsets), rescalesSince(rs, make([]int64, len(rs)))...)
	e.finish(&step, ws, tr, at, func(w workload, t time.Time) bool {
		return movedWithin(tl, shard.Bucket(w.ns, w.name, e.shards()), tr, t)
	}, logs)
	for b := range e.shards() {
		if movedWithin(tl, b, tr, time.Now()) {
			step.movedBuckets++
		}
	}
	return step, err
}

// sampleHolders reads the bucket holders now and every 250 ms until stop,
// which returns the samples.
func (e *Env) sampleHolders(ctx context.Context) func() []holderSample {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	var out []holderSample
	read := func() {
		if h, err := e.bucketHolders(ctx); err == nil {
			mu.Lock()
			out = append(out, holderSample{at: time.Now(), holders: h})
			mu.Unlock()
		}
	}
	read()
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				read()
			}
		}
	}()
	var once sync.Once
	return func() []holderSample {
		once.Do(func() { cancel(); <-done })
		mu.Lock()
		defer mu.Unlock()
		return out
	}
}
