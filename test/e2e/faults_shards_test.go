//go:build faults

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/pkg/autoscaler/shard"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// identityLine is what a sharded podpilot logs once, with its holder identity in the Leases.
var identityLine = regexp.MustCompile(`Running the autoscaler on this replica's buckets".* identity="([^"]+)"`)

// podpilotIdentity waits for p's holder identity in its log.
func podpilotIdentity(ctx context.Context, t *testing.T, p *framework.Podpilot) string {
	t.Helper()
	var id string
	framework.WaitFor(ctx, t, time.Minute, "a sharded podpilot's identity in its log", func(context.Context) (bool, string, error) {
		m := identityLine.FindStringSubmatch(p.LogTail(1 << 22))
		if m == nil {
			return false, "not logged yet", nil
		}
		id = m[1]
		return true, "", nil
	})
	return id
}

// bucketHolders returns the live holder of each of n bucket Leases ("" for none or expired).
func bucketHolders(ctx context.Context, n int) ([]string, error) {
	out := make([]string, n)
	for i := range n {
		l, err := cluster.Client.CoordinationV1().Leases("podpilot-system").Get(ctx, fmt.Sprintf("podpilot-%d", i), metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("get bucket Lease %d: %w", i, err)
		}
		s := l.Spec
		if s.HolderIdentity == nil || s.RenewTime == nil || s.LeaseDurationSeconds == nil ||
			time.Since(s.RenewTime.Time) > time.Duration(*s.LeaseDurationSeconds)*time.Second {
			continue
		}
		out[i] = *s.HolderIdentity
	}
	return out, nil
}

// spreadOver reports whether holders are exactly want buckets for each of ids, and nothing else.
func spreadOver(holders []string, ids []string, want int) bool {
	count := map[string]int{}
	for _, h := range holders {
		count[h]++
	}
	if len(count) != len(ids) {
		return false
	}
	for _, id := range ids {
		if count[id] != want {
			return false
		}
	}
	return true
}

// rescalers returns the indexes of ps whose log records a rescale of the PodAutoscaler ns/name.
func rescalers(ps []*framework.Podpilot, ns, name string) []int {
	pa := fmt.Sprintf(`podAutoscaler="%s/%s"`, ns, name)
	var out []int
	for i, p := range ps {
		for line := range strings.Lines(p.LogTail(1 << 24)) {
			if strings.Contains(line, `] "Rescaled" `) && strings.Contains(line, pa) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// TestFaultShardsSpreadAndHandOver (issue 34 §3, sharded): three podpilots with
// --autoscaler-shards=6 spread the six bucket Leases 2/2/2; one is SIGKILLed, and its
// buckets are held by the two others (3/3) within takeoverBound; a PodAutoscaler of a moved bucket is rescaled by its new owner within
// one more round; no PodAutoscaler is rescaled by two live podpilots.
// takeoverBound is how long after its holder died a bucket's Lease is held by another replica
// at most: the lease duration, counted from when a survivor first listed the dead holder's last
// renewal (up to one retry period after it: survivors list the Leases every retry period), then
// up to one retry period to the plan that finds it expired, and one more when two survivors
// claimed the same bucket and the loser plans again; 1 s covers the requests' own time on a
// loaded machine.
func takeoverBound(lease, retry time.Duration) time.Duration {
	return lease + 3*retry + time.Second
}

func TestFaultShardsSpreadAndHandOver(t *testing.T) {
	ctx := t.Context()
	const lease, retry, shards = 8 * time.Second, time.Second, 6
	ps := takeOver(ctx, t, 3, fmt.Sprintf("--autoscaler-shards=%d", shards), "--leader-elect-lease-duration="+lease.String(),
		"--leader-elect-renew-deadline=5s", "--leader-elect-retry-period="+retry.String())
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = podpilotIdentity(ctx, t, p)
	}
	var holders []string
	framework.WaitFor(ctx, t, time.Minute, "six buckets spread 2/2/2", func(ctx context.Context) (bool, string, error) {
		var err error
		holders, err = bucketHolders(ctx, shards)
		return err == nil && spreadOver(holders, ids, 2), fmt.Sprint(holders), err
	})

	// One target in a bucket of the replica to be killed (moved), one in a survivor's (fixed). The
	// victim is not ps[0], where takeOver registered the metrics APIs.
	victim, survivors := 2, ids[:2]
	ns := cluster.CreateNamespace(ctx, t, "fault-shards")
	pick := func(ownedBy func(string) bool) string {
		for i := range 1000 {
			if name := fmt.Sprintf("t%d", i); ownedBy(holders[shard.Bucket(ns, name, shards)]) {
				return name
			}
		}
		t.Fatal("no name in the wanted buckets")
		return ""
	}
	moved := pick(func(h string) bool { return h == ids[victim] })
	fixed := pick(func(h string) bool { return slices.Contains(survivors, h) })
	exp := serveExporter(t)
	loads := map[string]*framework.Load{}
	for _, name := range []string{moved, fixed} {
		startWorkload(ctx, t, ns, name, 1)
		loads[name] = cluster.NewLoad(ctx, exp, ns, name, "zdns_vanguard_qps", false)
		t.Cleanup(loads[name].Stop)
		loads[name].Set(4000) // 2 replicas
		applyPodAutoscaler(ctx, t, ns, podAutoscalerYAML(name, "deployment", name, 1, 6, "zdns_vanguard_qps", "2000", ""))
	}
	for _, name := range []string{moved, fixed} {
		cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, name, 2)
	}
	before := map[string][]int{moved: rescalers(ps, ns, moved), fixed: rescalers(ps, ns, fixed)}
	if !slices.Equal(before[moved], []int{victim}) || len(before[fixed]) != 1 || before[fixed][0] == victim {
		t.Fatalf("rescalers before the kill: %s by %v, %s by %v; want each by its bucket's holder only", moved, before[moved], fixed, before[fixed])
	}

	if err := ps[victim].Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for _, name := range []string{moved, fixed} {
		loads[name].Set(8000) // 4 replicas
	}
	framework.WaitFor(ctx, t, 2*lease+10*time.Second, "the killed replica's buckets held by the others 3/3", func(ctx context.Context) (bool, string, error) {
		var err error
		holders, err = bucketHolders(ctx, shards)
		return err == nil && spreadOver(holders, survivors, 3), fmt.Sprint(holders), err
	})
	takeover := time.Since(killed)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, moved, 4)
	rescaled := time.Since(killed)
	cluster.WaitReplicas(ctx, t, 2*time.Minute, "Deployment", ns, fixed, 4)

	after := rescalers(ps[:2], ns, moved)
	if len(after) != 1 {
		t.Errorf("the moved PodAutoscaler was rescaled by %d survivors, want 1 (its bucket's new holder)", len(after))
	}
	if f := rescalers(ps, ns, fixed); !slices.Equal(f, before[fixed]) {
		t.Errorf("the fixed PodAutoscaler was rescaled by %v, want only %v (its bucket did not move)", f, before[fixed])
	}
	checkTiming(t, takeover <= takeoverBound(lease, retry), "buckets taken over %s after SIGKILL, promised within %s: the lease duration %s, 3 retry periods of %s and 1 s", takeover, takeoverBound(lease, retry), lease, retry)
	checkTiming(t, rescaled <= takeover+2*sharedSyncPeriod+time.Second, "moved PodAutoscaler rescaled %s after SIGKILL, promised within the takeover (%s) and one round", rescaled, takeover)
	for _, p := range ps[:2] {
		assertNoPanic(t, p)
	}
	reportFault(t, "shards-handover", "6 buckets 2/2/2 over 3 podpilots; SIGKILL of one: its buckets held 3/3 by the others %s after (lease %s), its PodAutoscaler rescaled %s after; %d survivor rescaled it, the fixed one rescaled by its holder only",
		takeover.Round(time.Millisecond), lease, rescaled.Round(time.Millisecond), len(after))
}
