package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// kustomizeOverlay writes an overlay of manifests/ into dir as a user
// would: this run's image, pulled never, and the cluster's Prometheus.
func kustomizeOverlay(t *testing.T, dir string) {
	t.Helper()
	root := framework.RepoRoot()
	b, err := os.ReadFile(filepath.Join(root, "manifests", "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	arg := -1
	for i, a := range d.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--prometheus-url=") {
			arg = i
		}
	}
	if arg < 0 {
		t.Fatal("manifests/deployment.yaml has no --prometheus-url argument")
	}
	base, err := filepath.Rel(dir, filepath.Join(root, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf(`apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- %s
images:
- name: ghcr.io/podpilot/podpilot
  newName: localhost/podpilot/podpilot
  newTag: %s
patches:
- target: {kind: Deployment, name: podpilot}
  patch: |
    - {op: replace, path: /spec/template/spec/containers/0/imagePullPolicy, value: Never}
    - {op: replace, path: /spec/template/spec/containers/0/args/%d, value: "--prometheus-url=%s"}
`, base, imageTag, arg, cluster.Node.PrometheusServiceURL)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKustomizeInstall applies the kustomize manifests (`kubectl apply -k`
// on an overlay) to the real node: the restricted namespace admits the pods,
// both replicas become Ready and the APIServices Available. It removes them
// again, so the chart can be installed after it.
func TestKustomizeInstall(t *testing.T) {
	checkGuards(t)
	ctx := t.Context()
	uninstallPodpilot(ctx, t)
	dir := t.TempDir()
	kustomizeOverlay(t, dir)
	start := time.Now()
	if _, err := cluster.Kubectl(ctx, "apply", "--server-side", "-k", dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := cluster.Kubectl(context.Background(), "delete", "-k", dir, "--wait", "--timeout", "3m", "--ignore-not-found"); err != nil {
			t.Error(err)
		}
	})
	if _, err := cluster.Kubectl(ctx, "-n", podpilotNS, "rollout", "status", "deployment/podpilot", "--timeout", "3m"); err != nil {
		t.Fatalf("%v\n%s", err, describePodpilotPods(ctx))
	}
	fmt.Printf("NODE install: kubectl apply -k to 2 pods Ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	checkProcesses(t, 2)
	for _, name := range podpilotAPIServices[:3] {
		framework.WaitFor(ctx, t, time.Minute, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return apiServiceState(ctx, name)
		})
	}
}
