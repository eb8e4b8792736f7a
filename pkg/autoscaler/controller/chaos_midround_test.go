package controller

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// movingBucket is the Ownership of the chaos fixture's PodAutoscaler when its bucket moves in the
// middle of rounds: held in numbered terms, each with a context that losing the bucket ends.
type movingBucket struct {
	term   int
	held   bool
	ctx    context.Context
	cancel context.CancelFunc
}

var _ Ownership = (*movingBucket)(nil)

func (b *movingBucket) Own(key cache.ObjectName) (context.Context, func(), bool) {
	if !b.held || key != paKey {
		return nil, nil, false
	}
	return b.ctx, func() {}, true
}

// gain starts a new term.
func (b *movingBucket) gain(parent context.Context) {
	b.term++
	b.held = true
	b.ctx, b.cancel = context.WithCancel(parent)
}

// midRound moves the chaos fixture's bucket in the middle of rounds, and counts what the rounds
// of ended terms did.
type midRound struct {
	bucket *movingBucket
	// readRate is the share of rounds that lose the bucket when they read the metric, before any
	// write; writeRate the share of landed scale writes after which it is lost, before the
	// round's status write.
	readRate, writeRate float64
	// atRead says the current round loses it at its metric read; round and roundTerm are the
	// round's context and term.
	atRead    bool
	round     context.Context
	roundTerm int
	// before and between count the losses at each point; refused the writes of an ended term
	// refused as client-go refuses a request whose context has ended; doubles the scale writes,
	// and staleStatus the status writes, of an ended term sent with a live context.
	before, between, refused, doubles, staleStatus int
}

// stale reports whether the current round's term has ended.
func (m *midRound) stale() bool { return !m.bucket.held || m.roundTerm != m.bucket.term }

// lose ends the term, and waits until the round's context has ended with it (the controller
// ends it from a goroutine of context.AfterFunc); a round context not tied to the term stays
// live, and its writes count as doubles.
func (m *midRound) lose() {
	round := m.round // the round returns once it sees the loss, and the test moves on
	m.bucket.held = false
	m.atRead = false
	m.bucket.cancel()
	select {
	case <-round.Done():
	case <-time.After(time.Second):
	}
}

// sent decides what becomes of a write of the current round: ok false if the client refuses it
// (its term has ended and so has its context, err is then the client's answer); stale says it
// is a write of an ended term sent anyway.
func (m *midRound) sent(a clienttesting.Action) (stale bool, err error) {
	if m.round == nil || !m.stale() {
		return false, nil
	}
	if m.round.Err() == nil {
		return true, nil
	}
	m.refused++
	return false, &url.Error{Op: "Put", URL: "https://10.96.0.1/" + a.GetResource().Resource, Err: m.round.Err()}
}

// injectMidRound makes the writes of an ended term behave as client-go's (refused once their
// context has ended) and loses the bucket right after writeRate of the scale writes land.
// Prepended after inject, it sees every write first.
func (c *chaos) injectMidRound() {
	m := c.mid
	c.kube.PrependReactor("update", "deployments", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "scale" {
			return false, nil, nil
		}
		stale, err := m.sent(a)
		switch {
		case stale:
			m.doubles++
			return false, nil, nil
		case err != nil:
			return true, nil, err
		case m.round == nil || c.rng.Float64() >= m.writeRate:
			return false, nil, nil
		}
		c.landed++
		_, obj, err := updateScale(c.kube, appsv1.SchemeGroupVersion.WithResource("deployments"))(a)
		m.between++
		m.lose()
		if err == nil && c.rng.IntN(2) == 0 { // landed, and its answer lost
			err = landedErrs[c.rng.IntN(len(landedErrs))]
		}
		return true, obj, err
	})
	c.podpilot.PrependReactor("update", "podautoscalers", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" {
			return false, nil, nil
		}
		stale, err := m.sent(a)
		if stale {
			m.staleStatus++
		}
		return err != nil, nil, err
	})
}

// readMetric is called when a round's metric read has its answer: the bucket is lost there if
// the round was drawn to lose it at its read. The read runs on a goroutine of its own (a shared
// flight), which the round stops waiting for once the bucket is lost.
func (c *chaos) readMetric() {
	if c.mid != nil && c.mid.atRead {
		c.mid.before++
		c.mid.lose()
	}
}

// syncRound runs one round of the PodAutoscaler: as the Lease holder's without shards; with a
// moving bucket, under its term (as syncAndRequeue claims it), losing it at the metric read in
// readRate of the rounds, and, once the round has returned, forgetting the PodAutoscaler (stop first, then forget)
// and handing the bucket to the next owner: this controller again or, half the time, a new one
// (another replica), each seeded from the status at its first round. It reports whether the
// round recommended: a round that lost the bucket at its read decided nothing, acted on nothing
// and checkpointed nothing, as if it had not run, so what it read is no recommendation the
// windows must respect.
func (c *chaos) syncRound() (recommended bool) {
	ctx := c.t.Context()
	if c.mid == nil {
		_ = c.ctrl.sync(ctx, paKey)
		return true
	}
	m := c.mid
	round, release, ok := c.ctrl.claim(ctx, paKey)
	if !ok {
		c.t.Fatal("a round of a held bucket was not claimed")
	}
	m.round, m.roundTerm = round, m.bucket.term
	m.atRead = c.rng.Float64() < m.readRate
	lostAtRead := m.atRead
	_ = c.ctrl.sync(round, paKey)
	release()
	m.round, m.atRead = nil, false
	if m.bucket.held {
		return true
	}
	c.ctrl.Forget(ctx, func(key cache.ObjectName) bool { return key == paKey })
	if c.rng.IntN(2) == 0 {
		c.restart()
		c.restarts++
	}
	m.bucket.gain(ctx)
	return !lostAtRead
}

// TestRandomBucketMovesMidRoundNeverExceedAPolicyOrAWindowOrScaleTwice is the randomized
// write-fault test with the bucket lost in the middle of rounds: at the metric read (before any
// write) in 10% of rounds and right after 30% of the scale writes landed (before the status
// write), besides the moves between rounds and the leader changes. The next owner, this controller or a
// new one, seeds from whatever of the round's writes landed. No change of the target may exceed
// a policy or a window, and no scale write of an ended term may be sent (a double scale: two
// owners' writes for one object).
func TestRandomBucketMovesMidRoundNeverExceedAPolicyOrAWindowOrScaleTwice(t *testing.T) {
	const seeds = 10
	var before, between int
	for seed := uint64(1); seed <= seeds; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			m := runChaos(t, seed, max(*chaosRounds/seeds, 1), 0.03, &midRound{readRate: 0.1, writeRate: 0.3})
			if m.doubles != 0 || m.staleStatus != 0 {
				t.Errorf("seed %d: %d scale and %d status writes of an ended term sent, want 0", seed, m.doubles, m.staleStatus)
			}
			before, between = before+m.before, between+m.between
			t.Logf("seed %d: bucket lost mid-round %d times before the scale write, %d between it and the status write; %d writes of ended terms refused, %d double scales, %d stale status writes",
				seed, m.before, m.between, m.refused, m.doubles, m.staleStatus)
		})
	}
	if before < *chaosRounds/100 || between < *chaosRounds/100 {
		t.Errorf("%d losses before the scale write, %d between it and the status write in %d rounds; the case checks too little", before, between, *chaosRounds)
	}
}
