package scenario

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// BuildPodcache builds bench/cmd/podcache, the unstripped typed pod
// informer of scenario g, to out.
func BuildPodcache(ctx context.Context, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./bench/cmd/podcache")
	cmd.Dir = framework.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build podcache: %w: %s", err, b)
	}
	return nil
}

// podcache is a running bench/cmd/podcache: it reports through its output
// how many pods its cache holds.
type podcache struct {
	cmd    *exec.Cmd
	synced atomic.Int64
	done   chan struct{}
	pid    string
}

// startPodcache runs the podcache binary against the cluster, its output
// in the cluster's logs and its pid recorded so hack/local-down.sh stops it
// if the bench dies.
func (e *Env) startPodcache() (*podcache, error) {
	c := e.Cluster
	logf, err := os.Create(filepath.Join(c.StateDir, "logs", "podcache.log"))
	if err != nil {
		return nil, fmt.Errorf("create podcache log: %w", err)
	}
	p := &podcache{done: make(chan struct{}), pid: filepath.Join(c.StateDir, "pids", "podcache.pid")}
	p.synced.Store(-1)
	p.cmd = exec.Command(e.Cfg.PodcacheBinary, "--kubeconfig="+c.Kubeconfig, "--interval=2s")
	p.cmd.Stderr = logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("podcache output: %w", err)
	}
	if err := p.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("start podcache: %w", err)
	}
	_ = os.WriteFile(p.pid, []byte(strconv.Itoa(p.cmd.Process.Pid)), 0o644) // only for local-down's cleanup
	go func() {
		p.follow(out, logf)
		_ = p.cmd.Wait()
		_ = logf.Close()
		close(p.done)
	}()
	return p, nil
}

// follow copies the output to log and keeps the last "synced <n> pods".
func (p *podcache) follow(out io.Reader, log io.Writer) {
	s := bufio.NewScanner(out)
	for s.Scan() {
		fmt.Fprintln(log, s.Text())
		var n int64
		if _, err := fmt.Sscanf(s.Text(), "synced %d pods", &n); err == nil {
			p.synced.Store(n)
		}
	}
}

// Synced returns the pods in the cache at its last report, -1 before it synced.
func (p *podcache) Synced() int { return int(p.synced.Load()) }

// Pid returns its process id.
func (p *podcache) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *podcache) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop terminates it (SIGTERM, SIGKILL after 10 s) and waits.
func (p *podcache) Stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	_ = os.Remove(p.pid)
}
