package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
	"github.com/podpilot/podpilot/test/loadgen"
)

// loadName names the left-behind load's pid and log files in the state directory.
const loadName = "demo-load"

// keep leaves the cluster and podpilot running, hands the load over to a
// detached copy of this program (so the metric stays fresh after the demo
// exits; hack/local-down.sh stops it with the rest), and prints how to look
// around and how to stop everything.
func (d *demo) keep(ctx context.Context) error {
	if err := d.handOverLoad(ctx); err != nil {
		d.down()
		return err
	}
	ns, state := d.namespace, rel(d.opts.stateDir)
	load := fmt.Sprintf("a load of %.0f qps", settleQPS())
	var podpilot string
	if !d.real() {
		podpilot = "podpilot log: " + rel(d.pp.LogPath)
	} else {
		load += fmt.Sprintf(" (for %s, to the Service's ClusterIP)", keptLoadFor)
		podpilot = fmt.Sprintf("podpilot: kubectl -n %s get pods; kubectl -n %s logs -l app.kubernetes.io/name=podpilot",
			framework.PodpilotNamespace, framework.PodpilotNamespace)
	}
	fmt.Fprintf(d.out, `The cluster, podpilot and %s keep running (--keep).
  kubeconfig: %s        (or: source %s/env)
  %s

Try (the env file sets KUBECONFIG and puts the kubectl 'make tools' built, the cluster's version, first on PATH):
  source %s/env
  kubectl get ppa -n %s
  kubectl describe ppa %s -n %s
  kubectl get --raw '%s'
  kubectl get pods -n %s -o wide
  kubectl top pods -n %s

Stop everything with: hack/local-down.sh %s
`, load, d.cluster.Kubeconfig, state, podpilot, state, ns, autoscaler, ns, servedPath(ns), ns, ns, state)
	return nil
}

// handOverLoad starts `demo --serve-load` detached and waits until it serves
// the load, then stops this process' load.
func (d *demo) handOverLoad(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the demo executable: %w", err)
	}
	args := []string{"--serve-load=" + d.opts.stateDir}
	if d.resources {
		args = append(args, "--serve-load-resources")
	}
	logf, err := os.Create(filepath.Join(d.opts.stateDir, "logs", loadName+".log"))
	if err != nil {
		return fmt.Errorf("create the load's log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the left-behind load: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	pidFile := filepath.Join(d.opts.stateDir, "pids", loadName+".pid")
	err = framework.Poll(ctx, 30*time.Second, "the left-behind load to start", func(context.Context) (bool, string, error) {
		_, err := os.Stat(pidFile)
		return err == nil, "no " + pidFile + " yet", nil
	})
	if err != nil {
		_ = cmd.Process.Kill()
		return fmt.Errorf("hand the load over: %w (log %s)", err, logf.Name())
	}
	d.stopLoad()
	return nil
}

// keptLoadFor bounds the load --keep leaves behind on the real node.
const keptLoadFor = 15 * time.Minute

// serveLoad is the left-behind load: it connects to the cluster in stateDir,
// makes the settle phase's load for vg1-vanguard until it is told to stop
// (on the real node: for keptLoadFor at most), and records its pid for
// hack/local-down.sh, which stops it only because stateDir is in its
// command line.
func serveLoad(ctx context.Context, stateDir string, resources bool) error {
	c, err := framework.Up(ctx, "", filepath.Join(stateDir, "env"))
	if err != nil {
		return fmt.Errorf("connect to the cluster in %s: %w", stateDir, err)
	}
	pidFile := filepath.Join(stateDir, "pids", loadName+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("record the load's pid: %w", err)
	}
	defer func() { _ = os.Remove(pidFile) }() // local-down ignores a stale pid file
	if c.Node.Name != "" {
		return sendSettleLoad(ctx, c)
	}
	return serveKwokLoad(ctx, c, resources)
}

// serveKwokLoad serves the settle phase's counter (and cpu/memory series if
// resources) for the kwok pods until ctx is done.
func serveKwokLoad(ctx context.Context, c *framework.Cluster, resources bool) error {
	exp, err := exporter.Serve(clock.RealClock{})
	if err != nil {
		return fmt.Errorf("start the exporter: %w", err)
	}
	defer func() { _ = exp.Close() }() // shutting down; nothing to report to
	load := c.NewLoad(ctx, exp, demoNamespace, workload, seriesName, true)
	defer load.Stop()
	load.Set(settleQPS())
	if resources {
		usage := c.NewUsage(ctx, exp, demoNamespace, workload, cpuCores(settleQPS()), podMemoryBytes)
		defer usage.Stop()
	}
	if err := exp.RegisterTarget(c.TargetsDir, exporterName); err != nil {
		return fmt.Errorf("register the exporter with Prometheus: %w", err)
	}
	fmt.Printf("serving %.0f qps for %s/%s from %s until SIGTERM\n", settleQPS(), demoNamespace, workload, exp.Addr)
	<-ctx.Done()
	return nil
}

// sendSettleLoad sends the settle phase's rate to vg1-vanguard's Service on
// the real node for keptLoadFor, or until ctx is done.
func sendSettleLoad(ctx context.Context, c *framework.Cluster) error {
	svc, err := c.Client.CoreV1().Services(demoNamespace).Get(ctx, workload, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get service %s/%s: %w", demoNamespace, workload, err)
	}
	url := "http://" + svc.Spec.ClusterIP + "/query"
	cfg := loadgen.DefaultConfig(url)
	cfg.MaxDuration = keptLoadFor
	gen, err := loadgen.New(cfg, clock.RealClock{})
	if err != nil {
		return fmt.Errorf("load generator for %s: %w", url, err)
	}
	fmt.Printf("sending %.0f qps to %s for %s or until SIGTERM\n", settleQPS(), url, keptLoadFor)
	settle := loadgen.Profile{{Name: "settle", Duration: keptLoadFor, From: settleQPS(), To: settleQPS()}}
	counts, err := gen.Run(ctx, settle, nil)
	fmt.Printf("sent %d requests: %d answered, %d failed, %d skipped\n", counts.Sent, counts.Answered, counts.Failed, counts.Skipped)
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("send the load to %s: %w", url, err)
	}
	return nil
}
