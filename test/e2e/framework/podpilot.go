package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Podpilot is a podpilot process running against the cluster.
type Podpilot struct {
	// Port is its secure port on 127.0.0.1.
	Port int
	// LogPath is the file its output goes to.
	LogPath string
	pidFile string
	cmd     *exec.Cmd
	done    chan struct{}
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listens on now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartPodpilot runs binary (bin/podpilot) against the cluster and its
// Prometheus with the cluster-admin kubeconfig plus args, and stops it when
// the test ends, printing the end of its log if the test failed.
func (c *Cluster) StartPodpilot(t testing.TB, binary string, args ...string) *Podpilot {
	t.Helper()
	p, err := c.RunPodpilot(binary, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("podpilot log (%s), last part:\n%s", p.LogPath, p.LogTail(4000))
		}
	})
	return p
}

// RunPodpilot is StartPodpilot for callers without a test: the caller stops it.
// With AutoscalerShardsEnv set, it runs on that many buckets (see shardArgs).
// Its pid is recorded in the cluster's state so hack/local-down.sh stops it
// too if the caller dies.
func (c *Cluster) RunPodpilot(binary string, args ...string) (*Podpilot, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("podpilot-%d", port)
	p := &Podpilot{
		Port: port, LogPath: filepath.Join(c.StateDir, "logs", name+".log"),
		pidFile: filepath.Join(c.StateDir, "pids", name+".pid"), done: make(chan struct{}),
	}
	base := []string{
		"--secure-port=" + strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--lister-kubeconfig=" + c.Kubeconfig,
		"--authentication-kubeconfig=" + c.Kubeconfig, "--authorization-kubeconfig=" + c.Kubeconfig,
		"--prometheus-url=" + c.BackendURL,
	}
	shards, err := shardArgs(args)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(binary, append(append(base, shards...), args...)...)
	if err := startLogged(p.cmd, p.LogPath, p.pidFile, p.done); err != nil {
		return nil, fmt.Errorf("start podpilot: %w", err)
	}
	return p, nil
}

// startLogged starts cmd in a session of its own with its output in logPath, records its pid in
// pidFile (so hack/local-down.sh stops it if the test dies) and closes done when it has exited.
func startLogged(cmd *exec.Cmd, logPath, pidFile string, done chan struct{}) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("create log: %w", err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	_ = os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	return nil
}

// LogTail returns the last n bytes of podpilot's log.
func (p *Podpilot) LogTail(n int) string {
	b, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	return tail(b, n)
}

// WaitReady waits until podpilot's /readyz answers ok.
func (p *Podpilot) WaitReady(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("podpilot exited; log: %s", p.LogTail(2000))
		}
		code, body, err := p.Get(ctx, "/readyz")
		return err == nil && code == http.StatusOK && body == "ok", nil
	})
	if err != nil {
		return fmt.Errorf("podpilot not ready: %w; log: %s", err, p.LogTail(2000))
	}
	return nil
}

// Stop terminates podpilot and waits for it to exit.
func (p *Podpilot) Stop() { stopLogged(p.cmd, p.pidFile, p.done) }

// stopLogged ends a process startLogged started: SIGTERM, SIGKILL after 15 s,
// and its pid file removed (also when it had already exited, so that
// hack/local-down.sh never signals a pid that may have been reused).
func stopLogged(cmd *exec.Cmd, pidFile string, done chan struct{}) {
	defer func() { _ = os.Remove(pidFile) }()
	select {
	case <-done:
		return
	default:
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// Exited reports whether the process has ended.
func (p *Podpilot) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Get fetches path from podpilot's secure port without credentials (its
// certificate is self-signed) and returns the status code and body.
func (p *Podpilot) Get(ctx context.Context, path string) (int, string, error) {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // self-signed local test server
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", p.Port, path), nil)
	if err != nil {
		return 0, "", fmt.Errorf("build request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("get %s: %w", path, err)
	}
	defer resp.Body.Close()
	b := make([]byte, 64<<10)
	n, _ := resp.Body.Read(b)
	return resp.StatusCode, string(b[:n]), nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// Signal sends sig to the podpilot process (e.g. SIGHUP to reload its rules).
func (p *Podpilot) Signal(sig os.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal podpilot: %w", err)
	}
	return nil
}

// ExitCode waits up to timeout for the process to exit on its own and returns its exit code,
// or -1 if it is still running.
func (p *Podpilot) ExitCode(timeout time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		return -1
	}
}

// Pid returns the process id.
func (p *Podpilot) Pid() int { return p.cmd.Process.Pid }
