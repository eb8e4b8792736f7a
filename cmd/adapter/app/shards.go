package app

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/client-go/kubernetes"
	componentbaseconfig "k8s.io/component-base/config"
	"k8s.io/klog/v2"

	"github.com/podpilot/podpilot/pkg/autoscaler/controller"
	"github.com/podpilot/podpilot/pkg/autoscaler/shard/election"
)

var (
	_ controller.Ownership = (*election.Shards)(nil)
	_ election.Owner       = (*controller.Controller)(nil)
)

// newShards returns the bucket Leases of --autoscaler-shards=n: <resource-name>-<i> in the
// leader election's namespace, with its timings.
func newShards(cfg componentbaseconfig.LeaderElectionConfiguration, n int, kube kubernetes.Interface) (*election.Shards, error) {
	s, err := election.New(election.Config{
		Client: kube.CoordinationV1(), Namespace: cfg.ResourceNamespace, Name: cfg.ResourceName, Shards: n,
		Identity: identity(), LeaseDuration: cfg.LeaseDuration.Duration, RenewDeadline: cfg.RenewDeadline.Duration,
		RetryPeriod: cfg.RetryPeriod.Duration,
	})
	if err != nil {
		return nil, fmt.Errorf("build autoscaler shards: %w", err)
	}
	return s, nil
}

// ownership is the controller's Ownership: s, or none (every PodAutoscaler) without shards.
func ownership(s *election.Shards) controller.Ownership {
	if s == nil {
		return nil
	}
	return s
}

// runSharded runs the controller on every replica, on the PodAutoscalers of the buckets this
// replica holds, while the shards hold a fair share of the buckets. When either ends (ctx done,
// or the controller failed), the other is stopped: the shards stop each bucket's rounds, forget
// them and release the Leases.
func (a *autoscaler) runSharded(ctx context.Context) error {
	klog.FromContext(ctx).Info("Running the autoscaler on this replica's buckets", "identity", a.shards.Identity())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		if err := a.shards.Run(ctx, a.ctrl); err != nil {
			klog.FromContext(ctx).Error(err, "Holding the autoscaler's buckets failed")
		}
	})
	err := a.runController(ctx)
	cancel()
	wg.Wait()
	return err
}
