package controller

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/url"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// chaosSpec: 1 to 20 replicas; up by at most 2 pods and down by at most 1 pod per 60 s; a 30 s
// scale-up and a 45 s scale-down stabilization window. Both directions' policies share one
// period, so that a change older than it counts for no policy.
const (
	chaosPeriod     = 60 * time.Second
	chaosUp         = 2
	chaosDown       = 1
	chaosUpWindow   = 30 * time.Second
	chaosDownWindow = 45 * time.Second
)

func chaosAutoscaler(pa *podpilotv1alpha1.PodAutoscaler) {
	pa.Spec.MaxReplicas = 20
	pa.Spec.Behavior = &podpilotv1alpha1.PodAutoscalerBehavior{
		ScaleUp: &podpilotv1alpha1.ScalingRules{StabilizationWindowSeconds: ptr.To(int32(chaosUpWindow / time.Second)),
			Policies: []podpilotv1alpha1.ScalingPolicy{{Type: podpilotv1alpha1.PodsScalingPolicy, Value: chaosUp, PeriodSeconds: int32(chaosPeriod / time.Second)}}},
		ScaleDown: &podpilotv1alpha1.ScalingRules{StabilizationWindowSeconds: ptr.To(int32(chaosDownWindow / time.Second)),
			Policies: []podpilotv1alpha1.ScalingPolicy{{Type: podpilotv1alpha1.PodsScalingPolicy, Value: chaosDown, PeriodSeconds: int32(chaosPeriod / time.Second)}}},
	}
}

// change is one change of the target's replicas as stored, and when.
type change struct {
	at       time.Time
	from, to int32
}

// recommendation is what a round was asked to recommend: the metric it read.
type recommendation struct {
	at       time.Time
	replicas int32
}

// chaos is a fixture whose writes fail at random.
type chaos struct {
	*fixture
	rng    *rand.Rand
	value  int32 // the metric's value per pod now, in thousands (2 pods against 2000 recommend value)
	served int32 // the value the metric source last answered, which the rounds since read
	// outage is the number of rounds left in which every write fails.
	outage int
	// deployments and autoscalers are what the lagging caches hold.
	deployments []appsv1.Deployment
	autoscalers []podpilotv1alpha1.PodAutoscaler
	// restarts counts the leader changes, landed the scale writes applied then answered by an
	// error, lagged the rounds with a lagging cache.
	restarts, landed, lagged int
	// moveRate is the share of rounds after which the PodAutoscaler's bucket moves (see
	// Controller.Forget: it is forgotten, and seeded from its status at the next round, as by a
	// new owner) while the controller keeps running; moves counts them.
	moveRate float64
	moves    int
	// mid, if not nil, moves the bucket in the middle of rounds (see midRound).
	mid *midRound
}

// chaosRounds is the number of rounds of the randomized write-fault test, over all its seeds;
// make test runs 1,000 (go test -run TestRandomWriteFailures -chaos-rounds=10000 for the long run).
var chaosRounds = flag.Int("chaos-rounds", 1000, "rounds of TestRandomWriteFailuresNeverExceedAPolicyOrAWindow over all its seeds")

// landedErrs are the answers a write may end with after it was applied: they can all follow
// the write's commit.
var landedErrs = []error{
	apierrors.NewTimeoutError("chaos: request timed out", 1),
	&url.Error{Op: "Put", URL: "https://10.96.0.1/apis/apps/v1/deployments/scale", Err: io.EOF},
	&url.Error{Op: "Put", URL: "https://10.96.0.1/apis/apps/v1/deployments/scale", Err: syscall.ECONNRESET},
	apierrors.NewInternalError(errors.New("etcdserver: request timed out")),
}

// inject makes, at random: a scale write refused (10%), applied then answered by one of
// landedErrs (12%), or failed with one of them without being applied (4%); a status write
// refused (25%), applied then answered by one of landedErrs (5%) or a conflict (10%); every
// event dropped (the recorder keeps none). During an outage every write fails, half of the
// scale writes after being applied.
func (c *chaos) inject() {
	c.kube.PrependReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "scale" {
			return false, nil, nil
		}
		apply := func() {
			c.landed++
			_, _, _ = updateScale(c.kube, appsv1.SchemeGroupVersion.WithResource("deployments"))(a)
		}
		lost := landedErrs[c.rng.IntN(len(landedErrs))]
		switch r := c.rng.Float64(); {
		case c.outage > 0 && r < 0.5:
			apply()
			return true, nil, lost
		case c.outage > 0:
			return true, nil, lost
		case r < 0.10:
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "vg1-vanguard", fmt.Errorf("chaos"))
		case r < 0.22:
			apply() // applied, then the answer is lost
			return true, nil, lost
		case r < 0.26:
			return true, nil, lost
		}
		return false, nil, nil
	})
	c.podpilot.PrependReactor("update", "podautoscalers", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		switch r := c.rng.Float64(); {
		case c.outage > 0 || r < 0.25:
			return true, nil, errStatusDenied
		case r < 0.30:
			pa := a.(clienttesting.UpdateAction).GetObject().(*podpilotv1alpha1.PodAutoscaler)
			if err := c.podpilot.Tracker().Update(a.GetResource(), pa, a.GetNamespace()); err != nil {
				return true, nil, err
			}
			return true, nil, landedErrs[c.rng.IntN(len(landedErrs))]
		case r < 0.40:
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: podpilotv1alpha1.GroupName, Resource: "podautoscalers"}, paKey.Name, fmt.Errorf("chaos"))
		}
		return false, nil, nil
	})
}

// round prepares one round: an outage starts (3% of rounds, 2 to 10 rounds long) or goes on;
// the leader changes (2% of rounds, 20% of the rounds of an outage); and the caches are
// refreshed from the clientsets, except that the Deployment's and the PodAutoscaler's each lag
// (keep what they held before) in 25% of rounds.
func (c *chaos) round() {
	switch {
	case c.outage > 0:
		c.outage--
	case c.rng.Float64() < 0.03:
		c.outage = 2 + c.rng.IntN(9)
	}
	restart := 0.02
	if c.outage > 0 {
		restart = 0.20
	}
	if c.rng.Float64() < restart {
		c.restart()
		c.restarts++
	}
	if c.moveRate > 0 && c.rng.Float64() < c.moveRate*(1+9*float64(min(c.outage, 1))) {
		c.ctrl.Forget(c.t.Context(), func(key cache.ObjectName) bool { return key == paKey })
		c.moves++
	}
	c.seedCaches()
	ctx := c.t.Context()
	fresh := 0
	if c.deployments == nil || c.rng.Float64() >= 0.25 {
		fresh++
		list, err := c.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			c.t.Fatal(err)
		}
		c.deployments = list.Items
	}
	if c.autoscalers == nil || c.rng.Float64() >= 0.25 {
		fresh++
		list, err := c.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			c.t.Fatal(err)
		}
		c.autoscalers = list.Items
	}
	if fresh < 2 {
		c.lagged++
	}
	replace(c.t, c.kubeInf.Apps().V1().Deployments().Informer(), c.deployments)
	replace(c.t, c.ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer(), c.autoscalers)
}

// TestRandomWriteFailuresNeverExceedAPolicyOrAWindow runs many rounds at random intervals with a
// random metric, while scale and status writes fail at random (refused, or applied and then
// answered by a timeout, EOF, a connection reset or a 500), status writes conflict, events are
// dropped, every write fails during outages, the leader changes (more often during outages) and
// the caches of the target and of the PodAutoscaler lag; it checks every change of the target's
// stored replicas against the spec: no more than the policies allow within their period, and no
// scale-down (up) past the highest (lowest) recommendation of its window. Seeds 1 to 10 share
// -chaos-rounds rounds; a failing seed is kept as a case of its own.
func TestRandomWriteFailuresNeverExceedAPolicyOrAWindow(t *testing.T) {
	const seeds = 10
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) { runChaos(t, seed, max(*chaosRounds/seeds, 1), 0, nil) })
	}
}

// TestRandomBucketMovesNeverExceedAPolicyOrAWindow is the randomized write-fault test with
// --autoscaler-shards: besides the leader changes, the PodAutoscaler's bucket moves after 3% of
// rounds (30% of the rounds of an outage), so that the controller forgets it and the next round
// seeds it from its status, whatever of the last scale and status writes landed.
func TestRandomBucketMovesNeverExceedAPolicyOrAWindow(t *testing.T) {
	const seeds = 10
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) { runChaos(t, seed, max(*chaosRounds/seeds, 1), 0.03, nil) })
	}
}

// runChaos runs the randomized write-fault test of one seed, the bucket moving between rounds at
// moveRate and, with mid, in the middle of rounds (see midRound), which it returns with its counts.
func runChaos(t *testing.T, seed uint64, rounds int, moveRate float64, mid *midRound) *midRound {
	c := &chaos{rng: rand.New(rand.NewPCG(seed, 20)), moveRate: moveRate}
	custom := customFunc(func(_ context.Context, _ string, _ labels.Selector, _ provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
		c.served = c.value
		answer, err := qpsPerPod(fmt.Sprint(c.value*1000), podNames(2)...)(t.Context(), ns, nil, provider.CustomMetricInfo{}, nil)
		c.readMetric() // after the answer: the round returns once the bucket is lost, and the read (a flight of its own) must not see the next round's value
		return answer, err
	})
	c.fixture = newFixture(t, custom, nil, append(seedPods(2), seedDeployment(4), seedAutoscaler(chaosAutoscaler))...)
	c.recorder = &events.FakeRecorder{}
	if mid != nil {
		c.mid, mid.bucket = mid, &movingBucket{}
		c.mid.bucket.gain(t.Context())
		c.ownership = c.mid.bucket
	}
	c.restart()
	c.inject()
	if c.mid != nil {
		c.injectMidRound()
	}
	c.value = 4
	var changes []change
	var recs []recommendation
	for range rounds {
		if c.rng.IntN(4) == 0 {
			c.value = int32(1 + c.rng.IntN(20)) // 2 pods at value × 1000 against 2000: recommends value
		}
		before := c.replicas("")
		c.round()
		recommended := c.syncRound()
		now := c.clock.Now()
		if recommended {
			recs = append(recs, recommendation{at: now, replicas: c.served})
		}
		if after := c.replicas(""); after != before {
			changes = append(changes, change{at: now, from: before, to: after})
		}
		c.clock.Step(time.Duration(1+c.rng.IntN(20)) * time.Second)
	}
	for i, ch := range changes {
		if err := checkChange(ch, changes[:i], recs); err != nil {
			t.Fatalf("seed %d, change %d (%s after the start, %d → %d): %v\nchanges: %v", seed, i, ch.at.Sub(now), ch.from, ch.to, err, changes)
		}
	}
	t.Logf("seed %d: %d rounds, %d changes, 0 violations; %d leader changes, %d bucket moves, %d scale writes applied then failed, %d rounds with a lagging cache",
		seed, rounds, len(changes), c.restarts, c.moves, c.landed, c.lagged)
	if len(changes) < rounds/40 {
		t.Errorf("seed %d: only %d changes in %d rounds; the case checks too little", seed, len(changes), rounds)
	}
	return c.mid
}

// checkChange checks one change against the policies, counting the changes before it within the
// period (as upstream's getReplicasChangePerPeriod), and against the windows: a scale-down never
// below the highest recommendation of the scale-down window, a scale-up never above the lowest
// of the scale-up window (or the current replicas, if more).
func checkChange(ch change, before []change, recs []recommendation) error {
	var up, down int32
	for _, b := range before {
		if b.at.After(ch.at.Add(-chaosPeriod)) {
			if b.to > b.from {
				up += b.to - b.from
			} else {
				down += b.from - b.to
			}
		}
	}
	start := ch.from - up + down
	switch {
	case ch.to > ch.from && ch.to > start+chaosUp:
		return fmt.Errorf("scale-up past the policy: %d pods at most per %s from %d at the period's start", chaosUp, chaosPeriod, start)
	case ch.to < ch.from && ch.to < start-chaosDown:
		return fmt.Errorf("scale-down past the policy: %d pod at most per %s from %d at the period's start", chaosDown, chaosPeriod, start)
	}
	highest, lowest := int32(0), int32(math.MaxInt32)
	for _, r := range recs {
		if r.at.After(ch.at) {
			break
		}
		if r.at.After(ch.at.Add(-chaosDownWindow)) {
			highest = max(highest, r.replicas)
		}
		if r.at.After(ch.at.Add(-chaosUpWindow)) {
			lowest = min(lowest, r.replicas)
		}
	}
	switch {
	case ch.to < ch.from && ch.to < min(highest, 20):
		return fmt.Errorf("scale-down below the highest recommendation of the %s window (%d)", chaosDownWindow, highest)
	case ch.to > ch.from && ch.to > max(lowest, ch.from):
		return fmt.Errorf("scale-up above the lowest recommendation of the %s window (%d)", chaosUpWindow, lowest)
	}
	return nil
}
