package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestChartBesideOtherAdapters checks docs/alongside.md: apiServices.external.enabled=false
// renders what manifests/ with components/without-external-metrics renders (the KEDA layout,
// test/e2e/testdata/beside-keda), turning every group off renders no APIService, and at a
// server-side render Helm's lookup refuses an APIService of an enabled group that points at
// another Service (here TestMain's, podpilot-system/podpilot, for a release in another
// namespace), naming it and the value that leaves the group out.
func TestChartBesideOtherAdapters(t *testing.T) {
	ctx := t.Context()
	manifestsTLS := []string{"--set", "tls.insecureSkipTLSVerify=true"}
	t.Run("apiServices.external.enabled=false renders manifests/ with components/without-external-metrics", func(t *testing.T) {
		keda := renderKustomization(ctx, t, filepath.Join("test", "e2e", "testdata", "beside-keda"))
		compareObjects(t, "kustomize", without(keda, "Namespace"), "helm",
			withoutKeep(t, renderChart(ctx, t, append(manifestsTLS, "--set", "apiServices.external.enabled=false")...)))
	})
	t.Run("every group off renders no APIService and tells podpilot to skip both groups", func(t *testing.T) {
		objs := renderChart(ctx, t, "--set", "apiServices.custom.enabled=false,apiServices.external.enabled=false")
		if n := len(objs) - len(without(objs, "APIService")); n != 0 {
			t.Errorf("%d APIServices rendered", n)
		}
		args := deploymentArgs(t, objs)
		for _, want := range []string{"--apiservice-owner=" + podpilotNamespace + "/podpilot",
			"--apiservice-skip-groups=custom.metrics.k8s.io", "--apiservice-skip-groups=external.metrics.k8s.io"} {
			if !strings.Contains(args, want) {
				t.Errorf("podpilot args %s lack %s", args, want)
			}
		}
	})

	serverRender := func(ns string, args ...string) (string, error) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, helmBinary(t), append([]string{"template", "podpilot", chartDir, "--namespace", ns,
			"--dry-run=server", "--kubeconfig", cluster.Kubeconfig}, args...)...)
		cmd.Dir, cmd.Stderr = framework.RepoRoot(), &stderr
		_, err := cmd.Output()
		return stderr.String(), err
	}
	t.Run("lookup refuses an APIService that points at another Service, naming it and the value to set", func(t *testing.T) {
		stderr, err := serverRender("podpilot-elsewhere")
		if err == nil {
			t.Fatal("helm template --dry-run=server succeeded for a release whose APIServices another Service holds")
		}
		for _, want := range []string{"APIService v1beta2.custom.metrics.k8s.io already exists",
			"points at Service " + podpilotNamespace + "/podpilot", "podpilot-elsewhere/podpilot", "set apiServices.custom.enabled=false"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("helm's error lacks %q:\n%s", want, stderr)
			}
		}
	})
	t.Run("lookup lets a release take APIServices that point at its own Service", func(t *testing.T) {
		if stderr, err := serverRender(podpilotNamespace); err != nil {
			t.Errorf("helm template --dry-run=server in %s: %v\n%s", podpilotNamespace, err, stderr)
		}
	})
	t.Run("lookup does not look at the groups left out", func(t *testing.T) {
		if stderr, err := serverRender("podpilot-elsewhere", "--set", "apiServices.custom.enabled=false,apiServices.external.enabled=false"); err != nil {
			t.Errorf("helm template --dry-run=server with both groups off: %v\n%s", err, stderr)
		}
	})
}

// deploymentArgs returns the podpilot container's args of the Deployment in objs, one per line.
func deploymentArgs(t *testing.T, objs []*unstructured.Unstructured) string {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		if len(containers) == 0 {
			break
		}
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		return strings.Join(args, "\n")
	}
	t.Fatal("no Deployment with a container rendered")
	return ""
}
