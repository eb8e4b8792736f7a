package framework

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// component is a process hack/local-up.sh started and recorded in
// pids/<name>.pid, with the command line it runs.
type component struct {
	name string
	pid  int
	args []string
}

func (c *Cluster) component(name string) (*component, error) {
	b, err := os.ReadFile(filepath.Join(c.StateDir, "pids", name+".pid"))
	if err != nil {
		return nil, fmt.Errorf("read %s pid: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("parse %s pid: %w", name, err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("read %s command line: %w", name, err)
	}
	return &component{name: name, pid: pid, args: strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")}, nil
}

// stop sends sig and waits up to 30s for the process to exit, then kills it.
func (p *component) stop(ctx context.Context, sig syscall.Signal) error {
	if err := syscall.Kill(p.pid, sig); err != nil {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	err := Poll(ctx, 30*time.Second, p.name+" to exit", func(context.Context) (bool, string, error) {
		return syscall.Kill(p.pid, 0) != nil, "still running", nil
	})
	if err != nil {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	return nil
}

// start runs the same command line again in its own session, appending to
// the same log and recording the new pid, so hack/local-down.sh stops it.
func (c *Cluster) startComponent(p *component) error {
	logf, err := os.OpenFile(filepath.Join(c.StateDir, "logs", p.name+".log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s log: %w", p.name, err)
	}
	defer logf.Close()
	cmd := exec.Command(p.args[0], p.args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	if err := os.WriteFile(filepath.Join(c.StateDir, "pids", p.name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return fmt.Errorf("write %s pid: %w", p.name, err)
	}
	go func() { _ = cmd.Wait() }()
	return nil
}

// StopAPIServer stops the cluster's kube-apiserver with SIGTERM and returns a
// function that starts it again with the same command line (the same etcd,
// port and certificates) and waits until its /readyz answers ok.
func (c *Cluster) StopAPIServer(ctx context.Context) (restart func(context.Context) error, err error) {
	p, err := c.component("kube-apiserver")
	if err != nil {
		return nil, err
	}
	if err := p.stop(ctx, syscall.SIGTERM); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := c.startComponent(p); err != nil {
			return err
		}
		return Poll(ctx, 2*time.Minute, "kube-apiserver /readyz", func(ctx context.Context) (bool, string, error) {
			b, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			return err == nil && strings.TrimSpace(string(b)) == "ok", string(b), err
		})
	}, nil
}

// Kill sends SIGKILL to podpilot and waits for it to exit: no shutdown, no
// Lease release.
func (p *Podpilot) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil {
		return fmt.Errorf("kill podpilot: %w", err)
	}
	<-p.done
	_ = os.Remove(p.pidFile)
	return nil
}

// RSS is podpilot's resident set size in bytes, from /proc.
func (p *Podpilot) RSS() (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", p.Pid()))
	if err != nil {
		return 0, fmt.Errorf("read podpilot status: %w", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("parse VmRSS %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", p.Pid())
}

// LogContains reports whether podpilot's log holds s.
func (p *Podpilot) LogContains(s string) bool {
	b, err := os.ReadFile(p.LogPath)
	return err == nil && strings.Contains(string(b), s)
}
