package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestAFailedStartUpStopsWhatStarted starts hack/local-up.sh with a kwok that exits at once: a
// tools cache whose kwok is a failing script, the other binaries the real ones. local-up.sh dies
// ("kwok exited during start-up"); what it had started (etcd, kube-apiserver, Prometheus,
// kube-controller-manager) must be stopped, so that the next start-up does not find a
// half-started cluster in its way ("already holds a cluster"), as a kubelet that fails at start did
// before.
func TestAFailedStartUpStopsWhatStarted(t *testing.T) {
	t.Parallel()
	real := filepath.Join(os.Getenv("HOME"), ".cache", "podpilot", "tools")
	if c := os.Getenv("PODPILOT_TOOLS_CACHE"); c != "" {
		real = c
	} else if x := os.Getenv("XDG_CACHE_HOME"); x != "" {
		real = filepath.Join(x, "podpilot", "tools")
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		t.Fatal(err)
	}
	cache, state := t.TempDir(), filepath.Join(t.TempDir(), "cluster")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "kwok-") {
			dir := filepath.Join(cache, e.Name())
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "kwok"), []byte("#!/bin/sh\necho failing on purpose >&2\nexit 1\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.Symlink(filepath.Join(real, e.Name()), filepath.Join(cache, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(t.Context(), "bash", "hack/local-up.sh")
	cmd.Dir = framework.RepoRoot()
	cmd.Env = append(os.Environ(), "PODPILOT_TOOLS_CACHE="+cache, "PODPILOT_STATE_DIR="+state, "PODPILOT_NODE=kwok", "PODPILOT_BACKEND=prometheus")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err == nil {
		t.Fatalf("hack/local-up.sh with a failing kwok succeeded:\n%s", text)
	}
	for _, want := range []string{"kwok exited during start-up", "start-up failed; stopping what started", "stopped kube-apiserver", "stopped etcd"} {
		if !strings.Contains(text, want) {
			t.Errorf("local-up.sh's output lacks %q:\n%s", want, text)
		}
	}
	if pids, _ := filepath.Glob(filepath.Join(state, "pids", "*.pid")); len(pids) > 0 {
		t.Errorf("pid files left behind: %v", pids)
	}
}
