package election

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// campaign runs one client-go leader elector for sl's Lease until ctx is cancelled (an abandon)
// or, once elected, until the term ends (lost, or released by end). A term stops its rounds and
// forgets its PodAutoscalers before cancel releases the Lease (ReleaseOnCancel), so that no
// other replica holds the bucket while this one still runs it. The slot is free again once the
// elector has returned.
//
// claim, when set, is the Lease as listed, held by another replica that let it expire: it is
// taken first by an update conditioned on that listing's resourceVersion, so that it lands only
// if nobody renewed or took the Lease since. A new elector would otherwise wait a whole lease
// duration from its own first look before it takes an expired Lease (client-go trusts only
// what it has watched), which would make a handover last two lease durations; the plan has
// watched the Lease every retry period and judged it expired by the same rule.
func (s *Shards) campaign(ctx context.Context, cancel context.CancelFunc, sl *slot, claim *coordinationv1.Lease, owner Owner, owns func(cache.ObjectName) bool) {
	logger := klog.FromContext(ctx).WithValues("lease", klog.KRef(s.cfg.Namespace, sl.name))
	defer func() {
		cancel()
		s.mu.Lock()
		sl.cancel, sl.term = nil, nil
		s.mu.Unlock()
	}()
	if claim != nil {
		if err := s.claim(ctx, claim); err != nil {
			logger.V(2).Info("Claiming an expired autoscaler Lease failed; planning again", "holder", claim.Spec.HolderIdentity, "err", err)
			return
		}
		logger.Info("Claimed an expired autoscaler Lease", "previousHolder", claim.Spec.HolderIdentity)
	}
	elected := make(chan context.Context, 1)
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: s.cfg.Namespace, Name: sl.name},
			Client:     s.cfg.Client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: s.cfg.Identity},
		},
		Name:          sl.name,
		LeaseDuration: s.cfg.LeaseDuration, RenewDeadline: s.cfg.RenewDeadline, RetryPeriod: s.cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leading context.Context) { elected <- leading },
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		logger.Error(err, "Building the leader elector failed")
		return
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		le.Run(ctx)
	}()
	select {
	case <-stopped: // abandoned before the Lease was acquired
		return
	case leading := <-elected:
		s.lead(klog.NewContext(leading, logger), sl, owner, owns)
	}
	cancel() // the term has stopped: release the Lease
	<-stopped
}

// lead runs one term of sl: it tells owner about the bucket, waits until the Lease is lost or
// end stops the term, then waits for the rounds in flight and has owner forget the bucket.
func (s *Shards) lead(leading context.Context, sl *slot, owner Owner, owns func(cache.ObjectName) bool) {
	logger := klog.FromContext(leading)
	rounds, stop := context.WithCancel(leading)
	defer stop()
	tm := &term{ctx: rounds, stop: stop}
	s.mu.Lock()
	sl.term = tm
	s.mu.Unlock()
	logger.Info("Holding autoscaler Lease")
	if owner != nil && rounds.Err() == nil {
		owner.Adopt(rounds, owns)
	}
	<-rounds.Done()
	s.mu.Lock()
	tm.stopped = true
	s.mu.Unlock()
	tm.rounds.Wait()
	if owner != nil {
		owner.Forget(context.WithoutCancel(leading), owns)
	}
	logger.Info("Stopped holding autoscaler Lease")
}

// claim makes this replica the holder of l, an expired Lease as listed, if it has not changed
// since (resourceVersion).
func (s *Shards) claim(ctx context.Context, l *coordinationv1.Lease) error {
	now := metav1.NewMicroTime(s.cfg.Clock.Now())
	l.Spec.HolderIdentity = ptr.To(s.cfg.Identity)
	l.Spec.LeaseDurationSeconds = ptr.To(int32(s.cfg.LeaseDuration / time.Second))
	l.Spec.AcquireTime, l.Spec.RenewTime = &now, &now
	l.Spec.LeaseTransitions = ptr.To(ptr.Deref(l.Spec.LeaseTransitions, 0) + 1)
	if _, err := s.cfg.Client.Leases(l.Namespace).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("claim Lease %s/%s: %w", l.Namespace, l.Name, err)
	}
	return nil
}
