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

	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/test/e2e/framework"
	"github.com/podpilot/podpilot/test/exporter"
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
	settle := settleQPS()
	ns, state := d.namespace, rel(d.opts.stateDir)
	fmt.Fprintf(d.out, `The cluster, podpilot and a load of %.0f qps keep running (--keep).
  kubeconfig: %s        (or: source %s/env)
  podpilot log: %s

Try:
  export KUBECONFIG=%s
  kubectl get ppa -n %s
  kubectl describe ppa %s -n %s
  kubectl get --raw '%s'
  kubectl get pods -n %s -o wide

Stop everything with: hack/local-down.sh %s
`, settle, d.cluster.Kubeconfig, state, rel(d.pp.LogPath), d.cluster.Kubeconfig, ns, autoscaler, ns, servedPath(ns), ns, state)
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

// serveLoad is the left-behind load: it connects to the cluster in stateDir,
// serves the settle phase's load for vg1-vanguard (and cpu/memory series if
// resources) until it is told to stop, and records its pid for
// hack/local-down.sh, which stops it only because stateDir is in its
// command line.
func serveLoad(ctx context.Context, stateDir string, resources bool) error {
	c, err := framework.Up(ctx, "", filepath.Join(stateDir, "env"))
	if err != nil {
		return fmt.Errorf("connect to the cluster in %s: %w", stateDir, err)
	}
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
	pidFile := filepath.Join(stateDir, "pids", loadName+".pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("record the load's pid: %w", err)
	}
	defer func() { _ = os.Remove(pidFile) }() // local-down ignores a stale pid file
	fmt.Printf("serving %.0f qps for %s/%s from %s until SIGTERM\n", settleQPS(), demoNamespace, workload, exp.Addr)
	<-ctx.Done()
	return nil
}
