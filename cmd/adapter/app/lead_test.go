package app

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
)

// fastElection is a leader election quick enough for a unit test yet slow enough for a loaded
// machine under -race (the Lease stores its duration in whole seconds).
func fastElection() componentbaseconfig.LeaderElectionConfiguration {
	return componentbaseconfig.LeaderElectionConfiguration{
		LeaderElect: true, LeaseDuration: metav1Duration(4 * time.Second), RenewDeadline: metav1Duration(3 * time.Second),
		RetryPeriod: metav1Duration(250 * time.Millisecond), ResourceLock: resourcelock.LeasesResourceLock,
		ResourceName: "podpilot", ResourceNamespace: "podpilot-system",
	}
}

// runs is the controller's Run as the leader calls it: it refuses to run twice at once, as the
// controller does (ErrAlreadyRunning), and records how many terms started. cluster, when set,
// counts the terms running on every replica, and most the most that ever ran at once.
type runs struct {
	active, started atomic.Int32
	cluster, most   *atomic.Int32
	fail            error
	// linger is how long a term takes to stop once its context ends (a round finishing).
	linger time.Duration
}

var errAlreadyRunning = errors.New("autoscaler is already running")

func (r *runs) run(ctx context.Context) error {
	n := r.active.Add(1)
	defer r.active.Add(-1)
	if n > 1 {
		return errAlreadyRunning
	}
	if r.cluster != nil {
		all := r.cluster.Add(1)
		defer r.cluster.Add(-1)
		for m := r.most.Load(); all > m && !r.most.CompareAndSwap(m, all); m = r.most.Load() {
		}
	}
	r.started.Add(1)
	if r.fail != nil {
		return r.fail
	}
	<-ctx.Done()
	time.Sleep(r.linger)
	return nil
}

func leaseLock(t *testing.T, client *kubefake.Clientset, id string) resourcelock.Interface {
	t.Helper()
	e := fastElection()
	lock, err := resourcelock.New(e.ResourceLock, e.ResourceNamespace, e.ResourceName, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	return lock
}

func holder(ctx context.Context, client *kubefake.Clientset) string {
	l, err := client.CoordinationV1().Leases("podpilot-system").Get(ctx, "podpilot", metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// leading reports whether the Lease is being renewed: its renew time is within the lease duration.
func leading(ctx context.Context, client *kubefake.Clientset) bool {
	l, err := client.CoordinationV1().Leases("podpilot-system").Get(ctx, "podpilot", metav1.GetOptions{})
	return err == nil && l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) < fastElection().LeaseDuration.Duration
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	}); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

func TestALostLeaseEndsTheTermBeforeTheNextCampaign(t *testing.T) {
	client := kubefake.NewClientset()
	var failRenewals atomic.Bool
	client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		if failRenewals.Load() {
			return true, nil, errors.New("etcdserver: request timed out")
		}
		return false, nil, nil
	})
	r := &runs{linger: 2 * time.Second} // longer than a retry period: the Lease is back before the term ends
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- lead(ctx, fastElection(), leaseLock(t, client, "a"), r.run) }()
	waitFor(t, "the first term", func() bool { return r.active.Load() == 1 })

	// Renewals fail: the Lease is lost, the term ends, and once renewals work again this replica
	// takes the Lease again and runs a second term; never two at once, never the Lease without a run.
	failRenewals.Store(true)
	waitFor(t, "the Lease to be lost", func() bool { return r.active.Load() == 1 && !leading(ctx, client) })
	failRenewals.Store(false)
	waitFor(t, "a second term", func() bool { return r.started.Load() == 2 && r.active.Load() == 1 })
	if h := holder(ctx, client); h != "a" {
		t.Errorf("Lease holder = %q, want this replica while it runs", h)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("lead = %v, want nil once ctx ends", err)
	}
	if h := holder(t.Context(), client); h != "" {
		t.Errorf("Lease holder after shutdown = %q, want it released", h)
	}
}

func TestARunThatFailsWhileLeadingReleasesTheLease(t *testing.T) {
	client := kubefake.NewClientset()
	failed := errors.New("informer caches did not sync")
	r := &runs{fail: failed}
	err := lead(t.Context(), fastElection(), leaseLock(t, client, "a"), r.run)
	if !errors.Is(err, failed) {
		t.Fatalf("lead = %v, want the run's error, so that the process exits", err)
	}
	if h := holder(t.Context(), client); h != "" {
		t.Errorf("Lease holder = %q, want it released for another replica", h)
	}
}

func TestTheOtherReplicaLeadsOnceTheLeaderStops(t *testing.T) {
	client := kubefake.NewClientset()
	var cluster, most atomic.Int32
	a, b := &runs{cluster: &cluster, most: &most}, &runs{cluster: &cluster, most: &most}
	ctxA, stopA := context.WithCancel(t.Context())
	ctxB, stopB := context.WithCancel(t.Context())
	defer stopB()
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() { doneA <- lead(ctxA, fastElection(), leaseLock(t, client, "a"), a.run) }()
	waitFor(t, "a to lead", func() bool { return a.active.Load() == 1 })
	go func() { doneB <- lead(ctxB, fastElection(), leaseLock(t, client, "b"), b.run) }()
	time.Sleep(time.Second) // b campaigns meanwhile
	stopA()
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to lead", func() bool { return b.active.Load() == 1 })
	if h := holder(t.Context(), client); h != "b" {
		t.Errorf("Lease holder = %q, want b", h)
	}
	stopB()
	if err := <-doneB; err != nil {
		t.Fatal(err)
	}
	if got := most.Load(); got != 1 {
		t.Errorf("%d terms ran at once on the two replicas, want 1", got)
	}
}
