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
	pidFile := filepath.Join(c.StateDir, "pids", "prometheus.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		return nil, fmt.Errorf("read prometheus pid: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return nil, fmt.Errorf("parse prometheus pid: %w", err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, fmt.Errorf("read prometheus command line: %w", err)
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return nil, fmt.Errorf("kill prometheus: %w", err)
	}
	_ = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return syscall.Kill(pid, 0) != nil, nil
	})
	return func(ctx context.Context) error { return c.startPrometheus(ctx, args, pidFile) }, nil
}

func (c *Cluster) startPrometheus(ctx context.Context, args []string, pidFile string) error {
	logf, err := os.OpenFile(filepath.Join(c.StateDir, "logs", "prometheus.log"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("open prometheus log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start prometheus: %w", err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644); err != nil {
		return fmt.Errorf("write prometheus pid: %w", err)
	}
	go func() { _ = cmd.Wait() }()
	return wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.PrometheusURL+"/-/ready", nil)
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
