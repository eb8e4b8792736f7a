package scenario

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/bench/internal/procstat"
	"github.com/podpilot/podpilot/bench/internal/promtext"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// leaseNamespace and leaseName are podpilot's leader election defaults
// (--leader-elect-resource-namespace, --leader-elect-resource-name): bucket i
// is the Lease leaseName-i.
const (
	leaseNamespace = "podpilot-system"
	leaseName      = "podpilot"
)

// replica is one sharded podpilot process of scenario s.
type replica struct {
	p *framework.Podpilot
	// id is its holder identity in the Leases, from its log.
	id     string
	direct *http.Client
}

// identityLine is what a sharded podpilot logs once, with its holder identity.
var identityLine = regexp.MustCompile(`Running the autoscaler on this replica's buckets".* identity="([^"]+)"`)

// shardArgs are the replicas' flags: the bench podpilot's, with --autoscaler-shards;
// the leader election timings stay podpilot's defaults.
func (e *Env) shardArgs() []string {
	return append(e.podpilotArgs(), fmt.Sprintf("--autoscaler-shards=%d", e.shards()))
}

// shards is Config.Shards, 6 unless set.
func (e *Env) shards() int {
	if e.Cfg.Shards > 0 {
		return e.Cfg.Shards
	}
	return 6
}

// startReplica starts one sharded podpilot without waiting for it.
func (e *Env) startReplica() (*replica, error) {
	p, err := e.Cluster.RunPodpilot(e.Cfg.PodpilotBinary, e.shardArgs()...)
	if err != nil {
		return nil, err
	}
	return &replica{p: p}, nil
}

// ready waits until r answers /readyz and has logged its identity.
func (e *Env) ready(ctx context.Context, r *replica) error {
	if err := r.p.WaitReady(ctx, 2*time.Minute); err != nil {
		return err
	}
	err := framework.PollEvery(ctx, 250*time.Millisecond, time.Minute, "a sharded podpilot's identity in its log", func(context.Context) (bool, string, error) {
		m := identityLine.FindStringSubmatch(r.p.LogTail(1 << 22))
		if m == nil {
			return false, "not logged yet", nil
		}
		r.id = m[1]
		return true, "", nil
	})
	if err != nil {
		return err
	}
	r.direct, err = restHTTPClient(e.Cluster.DirectConfig(r.p))
	return err
}

// metrics scrapes r's /metrics.
func (r *replica) metrics(ctx context.Context) (promtext.Families, error) {
	body, err := get(ctx, r.direct, fmt.Sprintf("https://127.0.0.1:%d/metrics", r.p.Port))
	if err != nil {
		return nil, fmt.Errorf("scrape replica %s: %w", r.id, err)
	}
	return promtext.Parse(body)
}

// cpu is the CPU time r's process has used.
func (r *replica) cpu() time.Duration {
	d, _ := procstat.CPU(r.p.Pid())
	return d
}

// logSize is the length of r's log now: where a step's part of it begins.
func (r *replica) logSize() int64 {
	fi, err := os.Stat(r.p.LogPath)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// rescalesSince returns the rescales r logged from byte offset on.
func (r *replica) rescalesSince(offset int64) map[string]int {
	b, err := os.ReadFile(r.p.LogPath)
	if err != nil || offset > int64(len(b)) {
		return nil
	}
	return rescaledIn(string(b[offset:]))
}

// ids returns the identities of rs.
func ids(rs []*replica) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.id
	}
	return out
}

// bucketHolders returns the live holder of each bucket Lease ("" for none,
// missing or expired).
func (e *Env) bucketHolders(ctx context.Context) ([]string, error) {
	l, err := e.Cluster.Client.CoordinationV1().Leases(leaseNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list Leases in %s: %w", leaseNamespace, err)
	}
	out := make([]string, e.shards())
	for _, lease := range l.Items {
		var i int
		if _, err := fmt.Sscanf(lease.Name, leaseName+"-%d", &i); err != nil || i < 0 || i >= len(out) ||
			lease.Name != fmt.Sprintf("%s-%d", leaseName, i) {
			continue
		}
		s := lease.Spec
		if s.HolderIdentity == nil || s.RenewTime == nil || s.LeaseDurationSeconds == nil ||
			time.Since(s.RenewTime.Time) > time.Duration(*s.LeaseDurationSeconds)*time.Second {
			continue
		}
		out[i] = *s.HolderIdentity
	}
	return out, nil
}

// waitEven waits until the buckets are spread evenly over rs and returns the holders.
func (e *Env) waitEven(ctx context.Context, rs []*replica, timeout time.Duration) ([]string, error) {
	var holders []string
	err := framework.PollEvery(ctx, 250*time.Millisecond, timeout, fmt.Sprintf("%d buckets spread evenly over %d replicas", e.shards(), len(rs)),
		func(ctx context.Context) (bool, string, error) {
			var err error
			holders, err = e.bucketHolders(ctx)
			if err != nil {
				return false, "", err
			}
			return evenOver(holders, ids(rs)), spreadString(holders, ids(rs)), nil
		})
	return holders, err
}

// benchPodpilotAutoscaler restarts the bench's own podpilot with its
// autoscaler on or off (the metrics APIServices stay on it) and points the
// APIServices at the new process.
func (e *Env) benchPodpilotAutoscaler(ctx context.Context, on bool) error {
	e.Podpilot.Stop()
	args := e.podpilotArgs()
	if !on {
		args = append(args, "--autoscaler-enabled=false")
	}
	p, err := e.startMetricsServer(ctx, e.Cfg.PodpilotBinary, args)
	if err != nil {
		return err
	}
	e.Podpilot = p
	if e.direct, err = restHTTPClient(e.Cluster.DirectConfig(p)); err != nil {
		return err
	}
	return e.routeCustomAPIs(ctx, p.Port)
}
