package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestDemoFallsBackToKwokWhereContainersCannotRun runs `make demo`'s script, hack/demo.sh, on a
// machine its preflight is told cannot run containers: an `id` first on PATH answers a non-root
// uid, so hack/node-preflight.sh stops at its first host check (exit 1) before installing
// anything. The demo says why, runs on the kwok node in a cluster of its own and shows the
// scaling (docs/local-cluster.md, "The demo on the real node").
func TestDemoFallsBackToKwokWhereContainersCannotRun(t *testing.T) {
	t.Parallel()
	stubs, state := t.TempDir(), t.TempDir()
	id := "#!/usr/bin/env bash\nif [[ ${1:-} == -u ]]; then echo 1000; exit 0; fi\nexec /usr/bin/id \"$@\"\n"
	if err := os.WriteFile(filepath.Join(stubs, "id"), []byte(id), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "bash", "hack/demo.sh",
		"--state-dir", filepath.Join(state, "cluster"), "--svg", filepath.Join(state, "demo.svg"))
	cmd.Dir = framework.RepoRoot()
	cmd.Env = append(os.Environ(), "PATH="+stubs+string(os.PathListSeparator)+os.Getenv("PATH"), "DEMO_NODE=auto", "KEEP=")
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("hack/demo.sh on a machine that cannot run containers: %v\n%s", err, text)
	}
	for _, want := range []string{
		"The real node cannot run on this machine: the real node needs root",
		"Falling back to the kwok demo",
		"result:       OK",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "apt-get") {
		t.Errorf("the preflight installed packages on a machine that cannot run the node:\n%s", text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "result:") {
			t.Logf("FIGURE kwok fallback demo: %s", strings.TrimSpace(line))
		}
	}
}
