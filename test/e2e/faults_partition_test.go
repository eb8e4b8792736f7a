//go:build faults

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/podpilot/podpilot/pkg/autoscaler/shard"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestFaultShardsPartition (issue 34 §4): two podpilots with --autoscaler-shards=4, one of them
// talking to the apiserver through a proxy the test owns. The proxy partitions that replica at its
// first scale write of a PodAutoscaler whose bucket it holds and whose load has just doubled: that
// write and every request after it are held, not refused, and the replica's process runs on. The
// other replica takes the bucket after the Lease expires and rescales the PodAutoscaler; then the
// proxy forwards the held requests. No scale or status write of the partitioned replica lands
// after the takeover: each is answered 409 Conflict (their resourceVersions are the stale owner's),
// until the healed replica holds the bucket's Lease again by a write of its own.
func TestFaultShardsPartition(t *testing.T) {
	ctx := t.Context()
	const lease, retry, shards = 8 * time.Second, time.Second, 4
	proxy := cluster.StartAPIServerProxy(t)
	args := []string{fmt.Sprintf("--autoscaler-shards=%d", shards), "--leader-elect-lease-duration=" + lease.String(),
		"--leader-elect-renew-deadline=5s", "--leader-elect-retry-period=" + retry.String()}
	ps := takeOverEach(ctx, t, framework.MetricsAPIServices, args, append(args[:len(args):len(args)], "--lister-kubeconfig="+proxy.Kubeconfig))
	survivor, cut := ps[0], ps[1]
	ids := []string{podpilotIdentity(ctx, t, survivor), podpilotIdentity(ctx, t, cut)}
	var holders []string
	framework.WaitFor(ctx, t, time.Minute, "four buckets spread 2/2", func(ctx context.Context) (bool, string, error) {
		var err error
		holders, err = bucketHolders(ctx, shards)
		return err == nil && spreadOver(holders, ids, 2), fmt.Sprint(holders), err
	})

	ns := cluster.CreateNamespace(ctx, t, "fault-partition")
	name := ""
	for i := 0; name == ""; i++ {
		if n := fmt.Sprintf("t%d", i); holders[shard.Bucket(ns, n, shards)] == ids[1] {
			name = n
		}
	}
	bucket := shard.Bucket(ns, name, shards)
	startWorkload(ctx, t, ns, name, 1)
	load := cluster.NewLoad(ctx, serveExporter(t), ns, name, "zdns_vanguard_qps", false)
	t.Cleanup(load.Stop)
	load.Set(4000) // 2 replicas
	applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML(name, "deployment", name, 1, 6, "zdns_vanguard_qps", "2000", ""))
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, name, 2)
	if r := rescalers(ps, ns, name); len(r) != 1 || r[0] != 1 {
		t.Fatalf("rescaled by %v before the partition, want by the holder of its bucket (1) only", r)
	}
	cutRescales := rescaleLines(cut, ns, name)

	scalePath := fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments/%s/scale", ns, name)
	proxy.PartitionOn(func(method, path string) bool { return isWrite(method) && path == scalePath })
	load.Set(8000) // 4 replicas
	select {
	case <-proxy.Partitioned():
	case <-time.After(2 * time.Minute):
		t.Fatal("the replica holding the bucket wrote no scale after the load doubled")
	}
	partitioned := proxy.PartitionedAt()
	framework.WaitFor(ctx, t, 2*lease+10*time.Second, "the survivor to hold the partitioned replica's bucket", func(ctx context.Context) (bool, string, error) {
		var err error
		holders, err = bucketHolders(ctx, shards)
		return err == nil && holders[bucket] == ids[0], fmt.Sprint(holders), err
	})
	takeover := time.Since(partitioned)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, name, 4)
	rescaled := time.Since(partitioned)
	framework.WaitFor(ctx, t, time.Minute, "the survivor's status write of 4 replicas", func(ctx context.Context) (bool, string, error) {
		pa, err := getPodAutoscaler(ctx, t, ns, name)
		return err == nil && pa.Status.DesiredReplicas == 4, "", err
	})
	if cut.Exited() {
		t.Fatal("the partitioned replica exited; the fault holds its requests, not its process")
	}

	proxy.Heal()
	if err := proxy.WaitHeldAnswered(time.Minute); err != nil {
		t.Fatal(err)
	}
	// Long enough for the healed replica to list, plan and win buckets back.
	atTakeover := holderNames(holders, ids)
	framework.WaitFor(ctx, t, 2*lease+10*time.Second, "four buckets spread 2/2 again", func(ctx context.Context) (bool, string, error) {
		var err error
		holders, err = bucketHolders(ctx, shards)
		return err == nil && spreadOver(holders, ids, 2), fmt.Sprint(holders), err
	})
	stale := staleWrites(proxy.Requests(), proxy.HealedAt(), ns, name, fmt.Sprintf("podpilot-%d", bucket))
	landed, held := 0, 0
	for _, r := range stale {
		if r.Held {
			held++
		}
		if r.Code < 300 {
			landed++
			t.Errorf("a write of the stale owner landed after the takeover: %s %s → %d (held %v)", r.Method, r.Path, r.Code, r.Held)
		}
	}
	if held == 0 {
		t.Error("no held scale or status write: the partition did not catch a write in flight")
	}
	if after := rescaleLines(cut, ns, name); after != cutRescales {
		t.Errorf("the partitioned replica logged %d rescales of the PodAutoscaler after the partition, want 0", after-cutRescales)
	}
	if r := rescalers(ps[:1], ns, name); len(r) != 1 {
		t.Error("the survivor did not rescale the PodAutoscaler")
	}
	checkTiming(t, takeover <= lease+2*retry+time.Second, "bucket taken over %s after the partition, promised within the lease duration %s (+ 2 retry periods of %s)", takeover, lease, retry)
	checkTiming(t, rescaled <= takeover+2*sharedSyncPeriod+time.Second, "rescaled %s after the partition, promised within the takeover (%s) and one round", rescaled, takeover)
	for _, p := range ps {
		assertNoPanic(t, p)
	}
	reportFault(t, "shards-partition", "4 buckets 2/2; one replica's apiserver traffic held from its scale write of a doubled load: the survivor held its bucket %s after (lease %s; holders then %v, s = survivor, p = partitioned) and rescaled 2 → 4 %s after; at the heal, %d scale/status writes of the stale owner (%d held) answered %v, %d landed; buckets 2/2 again (%v)",
		takeover.Round(time.Millisecond), lease, atTakeover, rescaled.Round(time.Millisecond), len(stale), held, codes(stale), landed, holderNames(holders, ids))
}

// isWrite reports whether method changes an object.
func isWrite(method string) bool { return method == http.MethodPut || method == http.MethodPatch }

// staleWrites returns the scale and status writes for the PodAutoscaler ns/name (and its
// Deployment of the same name) among reqs, the partitioned replica's answered requests: those
// answered from healed on (the held ones were forwarded then, after the takeover) up to the
// replica's first successful write of the bucket's Lease after the heal, when it owns the bucket
// again.
func staleWrites(reqs []framework.APIRequest, healed time.Time, ns, name, lease string) []framework.APIRequest {
	scale := fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments/%s/scale", ns, name)
	status := fmt.Sprintf("/apis/autoscaling.podpilot.io/v1alpha1/namespaces/%s/podautoscalers/%s/status", ns, name)
	leasePath := "/apis/coordination.k8s.io/v1/namespaces/podpilot-system/leases/" + lease
	var out []framework.APIRequest
	for _, r := range reqs {
		if r.Answered.Before(healed) || !isWrite(r.Method) {
			continue
		}
		if !r.Held && r.Path == leasePath && r.Code < 300 {
			break
		}
		if r.Path == scale || r.Path == status {
			out = append(out, r)
		}
	}
	return out
}

// codes lists the answers' codes.
func codes(reqs []framework.APIRequest) []int {
	out := make([]int, len(reqs))
	for i, r := range reqs {
		out[i] = r.Code
	}
	return out
}

// rescaleLines counts the lines of p's log that record a rescale of the PodAutoscaler ns/name.
func rescaleLines(p *framework.Podpilot, ns, name string) int {
	pa := fmt.Sprintf(`podAutoscaler="%s/%s"`, ns, name)
	n := 0
	for line := range strings.Lines(p.LogTail(1 << 24)) {
		if strings.Contains(line, `] "Rescaled" `) && strings.Contains(line, pa) {
			n++
		}
	}
	return n
}

// holderNames writes holders as s (ids[0], the survivor), p (ids[1], the partitioned) or - (none).
func holderNames(holders, ids []string) string {
	var b strings.Builder
	for _, h := range holders {
		switch h {
		case ids[0]:
			b.WriteByte('s')
		case ids[1]:
			b.WriteByte('p')
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}
