package node

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	podpilotNS = framework.PodpilotNamespace
	// syncPeriod is the installed podpilot's --autoscaler-sync-period.
	syncPeriod = 2 * time.Second
)

// installed is the image tag of the release the tests installed, if any.
var installed string

// ensurePodpilot installs the chart with this run's image unless it is
// installed already.
func ensurePodpilot(ctx context.Context, t *testing.T) {
	t.Helper()
	if installed == imageTag {
		return
	}
	helmInstall(ctx, t, imageTag)
}

// helmInstall installs or upgrades the chart to run the image tagged tag,
// with short periods, and waits until the rollout is done.
func helmInstall(ctx context.Context, t *testing.T, tag string) {
	t.Helper()
	start := time.Now()
	err := cluster.InstallChart(ctx, framework.ChartInstall{Tag: tag, ExtraArgs: []string{
		"--autoscaler-sync-period=" + syncPeriod.String(), "--metrics-relist-interval=5s", "-v=2",
	}})
	if err != nil {
		t.Fatal(err)
	}
	installed = tag
	t.Logf("helm upgrade --install with image tag %s: done in %s", tag, time.Since(start).Round(100*time.Millisecond))
}

// uninstallPodpilot removes the release, if any (and so the CRD and the
// PodAutoscalers).
func uninstallPodpilot(ctx context.Context, t *testing.T) {
	t.Helper()
	out, err := cluster.Helm(ctx, "list", "--namespace", podpilotNS, "--all", "--short")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), framework.PodpilotRelease) {
		installed = ""
		return
	}
	if _, err := cluster.Helm(ctx, "uninstall", framework.PodpilotRelease, "--namespace", podpilotNS, "--wait", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	installed = ""
}

func podpilotPods(ctx context.Context) ([]corev1.Pod, error) { return cluster.PodpilotPods(ctx) }

func leaseHolder(ctx context.Context) (string, error) { return cluster.LeaseHolder(ctx) }

// describePodpilotPods summarizes podpilot's pods for a failure message.
func describePodpilotPods(ctx context.Context) string {
	out, err := cluster.Kubectl(ctx, "-n", podpilotNS, "get", "pods,events", "-o", "wide")
	if err != nil {
		return err.Error()
	}
	return string(out)
}
