package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ToolPath returns the path hack/lib.sh gives the tool variable name (e.g.
// HELM, METRICS_SERVER), failing if the binary is not built.
func ToolPath(name string) (string, error) {
	cmd := exec.Command("bash", "-c", `source hack/lib.sh && printf %s "$`+name+`"`)
	cmd.Dir = RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate %s with hack/lib.sh: %w", name, err)
	}
	if _, err := os.Stat(string(out)); err != nil {
		return "", fmt.Errorf("%s is not built (make tools, make node-tools): %w", name, err)
	}
	return string(out), nil
}

// Helm runs the helm `make tools` builds with the cluster's admin
// kubeconfig, in the repository root, and returns its stdout.
func (c *Cluster) Helm(ctx context.Context, args ...string) ([]byte, error) {
	helm, err := ToolPath("HELM")
	if err != nil {
		return nil, err
	}
	return c.run(ctx, helm, args...)
}

// Kubectl runs the kubectl `make tools` builds (the control plane's
// version) with the cluster's admin kubeconfig and returns its stdout.
func (c *Cluster) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	kubectl, err := ToolPath("KUBECTL")
	if err != nil {
		return nil, err
	}
	return c.run(ctx, kubectl, args...)
}

func (c *Cluster) run(ctx context.Context, bin string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Dir, cmd.Stderr = RepoRoot(), &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s%s", bin, strings.Join(args, " "), err, out, stderr.String())
	}
	return out, nil
}
