package framework

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// StopPrometheus kills the cluster's Prometheus and returns a function that
// starts it again with the same command line and data, and waits until it is
// ready. Tests use it to check what happens while Prometheus is down.
func (c *Cluster) StopPrometheus(ctx context.Context) (restart func(context.Context) error, err error) {
	return c.StopProcess(ctx, "prometheus", c.PrometheusURL+"/-/ready")
}

// StopProcess kills the process hack/local-up.sh started and recorded as
// name (e.g. "thanos-sidecar") and returns a function that starts it again
// with the same command line and waits until readyURL answers 200.
func (c *Cluster) StopProcess(ctx context.Context, name, readyURL string) (restart func(context.Context) error, err error) {
	pidFile := filepath.Join(c.StateDir, "pids", name+".pid")
	b, err := os.ReadFile(pidFile)
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
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("kill %s: %w", name, err)
	}
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
	return func(ctx context.Context) error { return c.restartProcess(ctx, name, args, pidFile, readyURL) }, nil
}

func (c *Cluster) restartProcess(ctx context.Context, name string, args []string, pidFile, readyURL string) error {
	logf, err := os.OpenFile(filepath.Join(c.StateDir, "logs", name+".log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open %s log: %w", name, err)
	}
	defer logf.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return fmt.Errorf("write %s pid: %w", name, err)
	}
	go func() { _ = cmd.Wait() }()
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, readyURL, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}
