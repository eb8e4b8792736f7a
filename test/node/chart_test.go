package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

var apiServicesGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// podpilotAPIServices are the APIServices the chart registers with
// resourceMetrics.enabled.
var podpilotAPIServices = []string{
	"v1beta2.custom.metrics.k8s.io", "v1beta1.custom.metrics.k8s.io",
	"v1beta1.external.metrics.k8s.io", "v1beta1.metrics.k8s.io",
}

// TestChartInstall installs podpilot with `helm install charts/podpilot` as
// users do, and checks what only a real node shows: two replicas Ready
// behind their probes, one holding the Lease through in-cluster
// configuration, running as 65532 on a read-only root without capabilities,
// the PodDisruptionBudget counting them, and the APIServices Available
// through the Service with a verified serving certificate.
func TestChartInstall(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	uninstallPodpilot(ctx, t)
	start := time.Now()
	helmInstall(ctx, t, imageTag)
	fmt.Printf("NODE install: helm install to 2 pods Ready in %s\n", time.Since(start).Round(100*time.Millisecond))

	pods, err := podpilotPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Fatalf("%d podpilot pods, want 2:\n%s", len(pods), describePodpilotPods(ctx))
	}
	names := map[string]bool{}
	for _, p := range pods {
		names[p.Name] = true
		if p.Spec.NodeName != cluster.Node.Name {
			t.Errorf("pod %s runs on %q, want the real node %s", p.Name, p.Spec.NodeName, cluster.Node.Name)
		}
		for _, cs := range p.Status.ContainerStatuses {
			if !cs.Ready || cs.RestartCount != 0 {
				t.Errorf("pod %s container %s: ready %v, %d restarts", p.Name, cs.Name, cs.Ready, cs.RestartCount)
			}
		}
	}
	framework.WaitFor(ctx, t, time.Minute, "a podpilot pod holds the Lease", func(ctx context.Context) (bool, string, error) {
		holder, err := leaseHolder(ctx)
		return names[holder], "holder " + holder, err
	})
	checkProcesses(t, 2)
	checkPDB(ctx, t)
	waitAPIServicesAvailable(ctx, t, time.Minute)
	checkAPIServicesVerified(ctx, t)
}

// checkProcesses finds podpilot's container processes on the host and
// checks what the kubelet and runc made of the securityContext: user
// 65532, no capabilities, no privilege escalation, a read-only root.
func checkProcesses(t *testing.T, want int) {
	t.Helper()
	pids, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, f := range pids {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasPrefix(string(b), "/podpilot\x00") {
			continue
		}
		found++
		dir := filepath.Dir(f)
		status, err := os.ReadFile(filepath.Join(dir, "status"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{"Uid:\t65532\t65532\t65532\t65532", "Gid:\t65532\t65532\t65532\t65532", "CapEff:\t0000000000000000", "NoNewPrivs:\t1"} {
			if !strings.Contains(string(status), line+"\n") {
				t.Errorf("podpilot process %s: status lacks %q", dir, line)
			}
		}
		mounts, err := os.ReadFile(filepath.Join(dir, "mountinfo"))
		if err != nil {
			t.Fatal(err)
		}
		if opts := rootMountOptions(string(mounts)); !strings.HasPrefix(opts, "ro") {
			t.Errorf("podpilot process %s: root mounted %q, want read-only", dir, opts)
		}
	}
	if found != want {
		t.Errorf("found %d podpilot processes on the host, want %d", found, want)
	}
}

// rootMountOptions returns the mount options of "/" in a mountinfo file.
func rootMountOptions(mountinfo string) string {
	opts := ""
	for _, line := range strings.Split(mountinfo, "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			opts = f[5] // the last mount on "/" is the one seen
		}
	}
	return opts
}

// checkPDB checks that the PodDisruptionBudget counts both replicas and
// allows one disruption.
func checkPDB(ctx context.Context, t *testing.T) {
	t.Helper()
	framework.WaitFor(ctx, t, 30*time.Second, "the PodDisruptionBudget allows 1 disruption of 2 healthy pods", func(ctx context.Context) (bool, string, error) {
		pdb, err := cluster.Client.PolicyV1().PodDisruptionBudgets(podpilotNS).Get(ctx, "podpilot", metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("get PodDisruptionBudget: %w", err)
		}
		s := pdb.Status
		return s.CurrentHealthy == 2 && s.DisruptionsAllowed == 1, fmt.Sprintf("healthy %d/%d, disruptions allowed %d", s.CurrentHealthy, s.ExpectedPods, s.DisruptionsAllowed), nil
	})
}

// apiServiceState reports whether an APIService is Available, and why not.
func apiServiceState(ctx context.Context, name string) (bool, string, error) {
	u, err := cluster.Dynamic.Resource(apiServicesGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, "", fmt.Errorf("get APIService %s: %w", name, err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Available" {
			return m["status"] == "True", fmt.Sprintf("%v: %v", m["reason"], m["message"]), nil
		}
	}
	return false, "no Available condition", nil
}

// waitAPIServicesAvailable waits until all of podpilot's APIServices are Available.
func waitAPIServicesAvailable(ctx context.Context, t *testing.T, timeout time.Duration) {
	t.Helper()
	for _, name := range podpilotAPIServices {
		framework.WaitFor(ctx, t, timeout, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return apiServiceState(ctx, name)
		})
	}
}

// checkAPIServicesVerified checks that the APIServices verify podpilot's
// serving certificate: a caBundle, and no insecureSkipTLSVerify.
func checkAPIServicesVerified(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, name := range podpilotAPIServices {
		u, err := cluster.Dynamic.Resource(apiServicesGVR).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		skip, _, _ := unstructured.NestedBool(u.Object, "spec", "insecureSkipTLSVerify")
		bundle, _, _ := unstructured.NestedString(u.Object, "spec", "caBundle")
		if skip || bundle == "" {
			t.Errorf("APIService %s: insecureSkipTLSVerify %v, caBundle %d bytes: want the serving certificate verified", name, skip, len(bundle))
		}
	}
}

// availability watches podpilot's APIServices every 250ms and adds up the
// time any of them was not Available.
type availability struct {
	stop context.CancelFunc
	done chan struct{}
	// guarded by done: written by the watcher only
	down, longest time.Duration
	checks        int
}

func watchAPIServices(ctx context.Context) *availability {
	ctx, cancel := context.WithCancel(ctx)
	a := &availability{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		var since time.Time // when the current outage began
		for {
			up := true
			for _, name := range podpilotAPIServices {
				ok, _, err := apiServiceState(ctx, name)
				up = up && ok && err == nil
			}
			a.checks++
			now := time.Now()
			switch {
			case !up && since.IsZero():
				since = now
			case up && !since.IsZero():
				a.down += now.Sub(since)
				a.longest = max(a.longest, now.Sub(since))
				since = time.Time{}
			}
			select {
			case <-ctx.Done():
				if !since.IsZero() {
					a.down += now.Sub(since)
					a.longest = max(a.longest, now.Sub(since))
				}
				return
			case <-tick.C:
			}
		}
	}()
	return a
}

// Stop ends the watch and describes the outages.
func (a *availability) Stop() string {
	a.stop()
	<-a.done
	if a.down == 0 {
		return fmt.Sprintf("never (%d checks, 250ms apart)", a.checks)
	}
	return fmt.Sprintf("%.2fs in all, longest %.2fs (%d checks, 250ms apart)", a.down.Seconds(), a.longest.Seconds(), a.checks)
}
