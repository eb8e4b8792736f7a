package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Environment the e2e tests read:
//
//	PODPILOT_E2E_ENV   env file of a cluster already running (hack/local-up.sh's
//	                   $PODPILOT_STATE_DIR/env): use it instead of starting one.
//	PODPILOT_E2E_KEEP  if 1, leave the cluster the tests started running.
var (
	cluster *framework.Cluster
	// podpilotBinary is bin/podpilot built from this tree by TestMain.
	podpilotBinary string
	// metricsServer is the podpilot serving the cluster's metrics APIs for
	// every test; tests that need another configuration start their own.
	metricsServer *framework.Podpilot
)

// sharedPodpilotArgs configure the shared podpilot for tests: short
// discovery, sync and stabilization periods.
var sharedPodpilotArgs = []string{
	"--metrics-relist-interval=2s", "--metrics-max-age=5m", "-v=2",
	"--autoscaler-sync-period=2s", "--autoscaler-downscale-stabilization=20s",
}

// startMetricsServer starts the shared podpilot with the default rules and a
// short discovery interval, and registers its APIServices.
func startMetricsServer(ctx context.Context) error {
	if err := cluster.InstallCRDs(ctx); err != nil {
		return err
	}
	// The default rules plus resourceRules, so podpilot serves metrics.k8s.io
	// too, and a rule for per-Service gauges (Object metrics).
	withServices := strings.Replace(rules.DefaultYAML, "\nrules:\n", "\nrules:\n"+framework.ServiceRulesYAML, 1)
	if withServices == rules.DefaultYAML {
		return fmt.Errorf("add the service rule: no rules list in the default rules")
	}
	rulesFile := filepath.Join(cluster.StateDir, "podpilot-rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(withServices+framework.ResourceRulesYAML()), 0o644); err != nil {
		return fmt.Errorf("write rule file: %w", err)
	}
	p, err := cluster.RunPodpilot(podpilotBinary, append(sharedPodpilotArgs, "--config="+rulesFile)...)
	if err != nil {
		return err
	}
	metricsServer = p
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		return err
	}
	return cluster.RegisterMetricsAPIs(ctx, p.Port)
}

func TestMain(m *testing.M) {
	if group := os.Getenv(postRenderGroupEnv); group != "" { // this binary as Helm's post-renderer
		os.Exit(runHelmPostRender(group))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root := framework.RepoRoot()
	podpilotBinary = filepath.Join(root, "bin", "podpilot")
	// make build: the same version stamp as a release build. hack/test-e2e.sh built it before
	// starting its streams (PODPILOT_E2E_BUILT): each rebuilding it could replace the file while
	// another starts it.
	if os.Getenv("PODPILOT_E2E_BUILT") != "1" {
		build := exec.CommandContext(ctx, "make", "--no-print-directory", "build")
		build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "build podpilot: %v\n", err)
			return 1
		}
	}
	state, err := os.MkdirTemp("", "podpilot-e2e-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "state dir: %v\n", err)
		return 1
	}
	start := time.Now()
	c, err := framework.Up(ctx, state, os.Getenv("PODPILOT_E2E_ENV"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "start local control plane: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "local control plane up in %s (state %s)\n", time.Since(start).Round(time.Millisecond), c.StateDir)
	cluster = c
	if err := startMetricsServer(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "start the shared podpilot: %v\n", err)
		_ = c.Down(context.Background())
		return 1
	}
	code := m.Run()
	metricsServer.Stop()
	if os.Getenv("PODPILOT_E2E_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "leaving the cluster running: source %s/env\n", c.StateDir)
		return code
	}
	if err := c.Down(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "stop local control plane: %v\n", err)
		return 1
	}
	return code
}
