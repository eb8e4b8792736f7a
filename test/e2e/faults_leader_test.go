//go:build faults

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/shard"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The fault tests that kill "the leader" read it per PodAutoscaler, so that they check the same
// thing with one Lease and with framework.AutoscalerShardsEnv set (make test-faults-sharded):
// the leader of a PodAutoscaler is the holder of podpilot's Lease, or of its bucket's Lease.

// ownerLease returns the name of the Lease whose holder runs the PodAutoscaler ns/name.
func ownerLease(ns, name string) string {
	n := framework.AutoscalerShards()
	if n == 1 {
		return "podpilot"
	}
	return fmt.Sprintf("podpilot-%d", shard.Bucket(ns, name, n))
}

// leaseHolder returns the holder of the Lease that runs the PodAutoscaler ns/name ("" if none).
func leaseHolder(ctx context.Context, ns, name string) (string, error) {
	lease := ownerLease(ns, name)
	l, err := cluster.Client.CoordinationV1().Leases("podpilot-system").Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get Lease %s: %w", lease, err)
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *l.Spec.HolderIdentity, nil
}

// leader returns which of the two podpilots ps runs the PodAutoscaler ns/name: with one Lease,
// the one that logged it became leader; with buckets, the holder of its bucket once the buckets
// have settled over both (each holds at least one and at most its fair share: replicas started
// together may first take more than their share and hand the surplus over).
func leader(ctx context.Context, t *testing.T, ps []*framework.Podpilot, ns, name string) (lead, follower *framework.Podpilot) {
	t.Helper()
	n := framework.AutoscalerShards()
	if n == 1 {
		framework.WaitFor(ctx, t, time.Minute, "one podpilot to lead", func(context.Context) (bool, string, error) {
			for i, p := range ps {
				if p.LogContains("Became leader") {
					lead, follower = p, ps[1-i]
					return true, "", nil
				}
			}
			return false, "no leader yet", nil
		})
		return lead, follower
	}
	ids := []string{podpilotIdentity(ctx, t, ps[0]), podpilotIdentity(ctx, t, ps[1])}
	share := shard.FairShare(n, len(ids))
	framework.WaitFor(ctx, t, time.Minute, fmt.Sprintf("%d buckets settled over 2 podpilots", n), func(ctx context.Context) (bool, string, error) {
		holders, err := bucketHolders(ctx, n)
		if err != nil {
			return false, "", err
		}
		count := map[string]int{}
		for _, h := range holders {
			count[h]++
		}
		settled := count[ids[0]]+count[ids[1]] == n && count[ids[0]] <= share && count[ids[1]] <= share
		if !settled {
			return false, fmt.Sprint(holders), nil
		}
		h := holders[shard.Bucket(ns, name, n)]
		lead, follower = ps[0], ps[1]
		if h == ids[1] {
			lead, follower = ps[1], ps[0]
		}
		return true, "", nil
	})
	return lead, follower
}

// checkTookOver fails the test unless holder, the new holder of a PodAutoscaler's Lease, is
// follower.
func checkTookOver(ctx context.Context, t *testing.T, follower *framework.Podpilot, holder string) {
	t.Helper()
	if framework.AutoscalerShards() == 1 {
		if !follower.LogContains("Became leader") {
			t.Fatalf("the Lease went to %q, not the follower", holder)
		}
		return
	}
	if id := podpilotIdentity(ctx, t, follower); holder != id {
		t.Fatalf("the bucket's Lease went to %q, not the follower %q", holder, id)
	}
}
