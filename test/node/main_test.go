package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// Environment the real-node tests read:
//
//	PODPILOT_NODE_ENV   env file of a real-node cluster already running
//	                    (PODPILOT_NODE=real hack/local-up.sh): use it.
//	PODPILOT_NODE_KEEP  if 1, leave the cluster the tests started running.
var (
	cluster *framework.Cluster
	// proxy stands between the pods and Prometheus for the whole run: the
	// Service monitoring/prometheus leads to it, and fault tests set its
	// faults. Without a fault it relays every request unchanged.
	proxy *framework.PrometheusProxy
	// imageTag is the tag of the podpilot image this run built and imported.
	imageTag string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "the real-node tier needs root (see docs/local-cluster.md)")
		return 1
	}
	imageTag = "node-test-" + time.Now().UTC().Format("150405")
	if err := makeImages(ctx, imageTag); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	state, err := os.MkdirTemp("", "podpilot-node-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "state dir: %v\n", err)
		return 1
	}
	start := time.Now()
	c, err := framework.UpRealNode(ctx, state, os.Getenv("PODPILOT_NODE_ENV"))
	if err != nil {
		fmt.Fprintf(os.Stderr, "start local control plane with a real node: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "control plane and real node up in %s (state %s)\n", time.Since(start).Round(time.Millisecond), c.StateDir)
	cluster = c
	code := 1
	if err := setUp(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "set up the real node: %v\n", err)
	} else {
		code = m.Run()
	}
	if proxy != nil {
		proxy.Close()
	}
	if n, err := c.GuardPackets(context.Background()); err != nil || n != 0 {
		fmt.Fprintf(os.Stderr, "guards: %d packets would have left the machine (err %v)\n", n, err)
		code = 1
	}
	if os.Getenv("PODPILOT_NODE_KEEP") == "1" {
		fmt.Fprintf(os.Stderr, "leaving the cluster running: source %s/env\n", c.StateDir)
		return code
	}
	if err := c.Down(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "stop local control plane: %v\n", err)
		return 1
	}
	return code
}

// makeImages builds bin/podpilot and the images (make images) with tag.
func makeImages(ctx context.Context, tag string) error {
	cmd := exec.CommandContext(ctx, "make", "--no-print-directory", "images", "IMAGE_TAG="+tag)
	cmd.Dir, cmd.Stdout, cmd.Stderr = framework.RepoRoot(), os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make images: %w", err)
	}
	return nil
}

// setUp imports the podpilot image into the node and puts the proxy
// between the pods and Prometheus.
func setUp(ctx context.Context) error {
	if err := cluster.ImportImage(ctx, imageTarball("podpilot")); err != nil {
		return err
	}
	p, err := framework.NewPrometheusProxy(cluster.PrometheusURL, cluster.Node.IP)
	if err != nil {
		return err
	}
	proxy = p
	return cluster.PointPrometheusService(ctx, cluster.Node.IP, p.Port())
}

// imageTarball is the path of hack/build-image.sh's tarball of image name.
func imageTarball(name string) string {
	return filepath.Join(framework.RepoRoot(), "_output", "images", name+".tar")
}

// checkGuards makes the test fail, when it ends, if the guards dropped a
// packet: something tried to leave the machine.
func checkGuards(t *testing.T) {
	t.Helper()
	before, err := cluster.GuardPackets(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		after, err := cluster.GuardPackets(context.Background())
		if err != nil {
			t.Error(err)
			return
		}
		if after != before {
			t.Errorf("the guards dropped %d packets during the test: something tried to leave the machine", after-before)
		}
	})
}
