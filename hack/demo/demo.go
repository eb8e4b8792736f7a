package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The seed's example and where the demo runs it.
const (
	demoNamespace = "demo"
	workload      = "vg1-vanguard"
	autoscaler    = "hpa-vg1-vanguard"
	seriesName    = "zdns_vanguard_queries_total"
	metricName    = "zdns_vanguard_qps"
	targetPerPod  = 2000.0
	// cpuTargetPercent is the example's cpu Utilization target.
	cpuTargetPercent = 50.0
	minReplicas      = 1
	maxReplicas      = 5
	exporterName     = "demo-load"
)

// The nodes the demo runs on (--node).
const (
	nodeKwok = "kwok"
	nodeReal = "real"
)

// shortenedArgs shorten podpilot's periods so that the demo fits in a few
// minutes; the defaults are 1m, 15s, 5m and 5m. Without the last, a new
// pod's cpu would be ignored for the first minute (the 1m rate window).
var shortenedArgs = []string{
	"--metrics-relist-interval=5s", "--autoscaler-sync-period=5s",
	"--autoscaler-downscale-stabilization=30s", "--autoscaler-cpu-initialization-period=15s",
}

// demo is one run of the demo.
type demo struct {
	opts      options
	out       io.Writer
	namespace string

	binary  string
	cluster *framework.Cluster
	pp      *framework.Podpilot
	client  versioned.Interface
	// load makes the profile's queries happen: kwokLoad on the kwok node,
	// nodeLoad on the real node.
	load offeredLoad
	// resources says whether the PodAutoscaler kept the example's cpu and memory targets.
	resources bool
	samples   []sample
	began     time.Time
	// profileStart is when the load profile started.
	profileStart time.Time
	// rescaleReasons are the PodAutoscaler's SuccessfulRescale events.
	rescaleReasons []string
	// podpilotPeak is the most one of podpilot's pods used during the
	// profile (real node).
	podpilotPeak footprint
	// guardPackets is what the real node's guards dropped by the end.
	guardPackets int64
}

// real says whether the demo runs on the real node.
func (d *demo) real() bool { return d.opts.node == nodeReal }

func (d *demo) run(ctx context.Context) (err error) {
	d.began = time.Now()
	if err := d.checkPrerequisites(); err != nil {
		return err
	}
	d.printHeader()
	if err := d.up(ctx); err != nil {
		return err
	}
	defer func() {
		if d.opts.keep && err == nil {
			err = d.keep(ctx)
			return
		}
		d.down()
	}()
	if err := d.setUp(ctx); err != nil {
		return err
	}
	if err := d.applyAutoscaler(ctx); err != nil {
		return err
	}
	if err := d.drive(ctx); err != nil {
		return err
	}
	if err := d.readGuards(ctx); err != nil {
		return err
	}
	reasons, evErr := d.readRescales(ctx)
	if evErr != nil {
		reasons = []string{evErr.Error()}
	}
	d.rescaleReasons = reasons
	verdict := d.verdict()
	d.printSummary(time.Since(d.began), verdict)
	if err := writeSVG(d.opts.svgPath, d.samples, d.chartNotes()); err != nil {
		return err
	}
	fmt.Fprintf(d.out, "Chart of this run: %s\n", d.opts.svgPath)
	if err := d.guardsHeld(); err != nil {
		return err
	}
	return verdict
}

// checkPrerequisites checks that what the demo runs was built: bin/podpilot
// on the kwok node, the images on the real node.
func (d *demo) checkPrerequisites() error {
	if d.real() {
		for _, name := range nodeImages {
			if _, err := os.Stat(imageTarball(name)); err != nil {
				return fmt.Errorf("%w: %s not found; run `make demo`, or `make images` first", errPrerequisite, imageTarball(name))
			}
		}
		return nil
	}
	d.binary = filepath.Join(framework.RepoRoot(), "bin", "podpilot")
	if _, err := os.Stat(d.binary); err != nil {
		return fmt.Errorf("%w: %s not found; run `make demo`, which builds it first", errPrerequisite, d.binary)
	}
	return nil
}

// setUp installs podpilot and starts the workload at no load.
func (d *demo) setUp(ctx context.Context) error {
	if d.real() {
		if err := d.installChart(ctx); err != nil {
			return err
		}
		return d.startNodeWorkload(ctx)
	}
	if err := d.startPodpilot(ctx); err != nil {
		return err
	}
	return d.startWorkload(ctx)
}

// up tears down what an earlier demo left in the state directory and starts a
// fresh local control plane there.
func (d *demo) up(ctx context.Context) error {
	d.step("Starting the local control plane in %s (hack/local-up.sh; log %s)", rel(d.opts.stateDir), rel(d.upLog()))
	down := exec.CommandContext(ctx, filepath.Join(framework.RepoRoot(), "hack", "local-down.sh"), d.opts.stateDir)
	if out, err := down.CombinedOutput(); err != nil {
		return fmt.Errorf("tear down the old demo cluster in %s: %w\n%s", d.opts.stateDir, err, out)
	}
	start := time.Now()
	c, err := d.quietUp(ctx)
	if err != nil {
		return err
	}
	d.cluster = c
	if d.client, err = versioned.NewForConfig(c.Config); err != nil {
		return fmt.Errorf("build podpilot clientset: %w", err)
	}
	took := time.Since(start).Round(100 * time.Millisecond)
	if d.real() {
		d.step("Control plane up in %s: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, Prometheus,\n"+
			"and the real node %s (kubelet, containerd, runc, kube-proxy) on the bridge %s;\nguards drop and count any packet that would leave the machine (%s)",
			took, c.Node.Name, c.Node.IP, c.Node.GuardChain)
		return nil
	}
	d.step("Control plane up in %s: etcd, kube-apiserver, kube-controller-manager, kwok node %s, Prometheus", took, c.KwokNode)
	return nil
}

// quietUp runs framework.Up with hack/local-up.sh's output going to
// _output/demo/local-up.log instead of the terminal, and shows its end if it fails.
func (d *demo) quietUp(ctx context.Context) (*framework.Cluster, error) {
	logPath := d.upLog()
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Dir(logPath), err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", logPath, err)
	}
	defer logf.Close()
	stderr := os.Stderr
	os.Stderr = logf // framework.Up sends hack/local-up.sh's output to os.Stderr
	up := framework.Up
	if d.real() {
		up = framework.UpRealNode
	}
	c, err := up(ctx, d.opts.stateDir, "")
	os.Stderr = stderr
	if err != nil {
		out, _ := os.ReadFile(logPath)
		return nil, fmt.Errorf("start the local control plane (log %s): %w\n%s", logPath, err, out)
	}
	return c, nil
}

// upLog is where hack/local-up.sh's output goes.
func (d *demo) upLog() string {
	return filepath.Join(filepath.Dir(d.opts.svgPath), "local-up.log")
}

// down stops the load, podpilot and the control plane.
func (d *demo) down() {
	d.stopLoad()
	if d.pp != nil {
		d.pp.Stop()
	}
	if d.cluster == nil {
		return
	}
	d.step("Tearing the cluster down (hack/local-down.sh)")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.cluster.Down(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
	}
}

func (d *demo) stopLoad() {
	if d.load != nil {
		d.load.stop()
		d.load = nil
	}
}

// step prints one progress item of the set-up, stamped with the time since
// the demo began; continuation lines (after "\n") are indented under it.
func (d *demo) step(format string, args ...any) {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\n        ")
	fmt.Fprintf(d.out, "  %s  %s\n", clockString(time.Since(d.began)), msg)
}

func rel(path string) string {
	if r, err := filepath.Rel(framework.RepoRoot(), path); err == nil && !filepath.IsAbs(r) && r[0] != '.' {
		return r
	}
	return path
}
