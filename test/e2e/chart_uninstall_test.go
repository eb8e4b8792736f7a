package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// postRenderGroupEnv, when set, makes this test binary the Helm post-renderer of
// TestChartUninstallKeepsPodAutoscalers (see TestMain); its value is the API group the chart's
// CRD is moved to.
const postRenderGroupEnv = "PODPILOT_E2E_HELM_POST_RENDER_GROUP"

// runHelmPostRender is the post-renderer's main: Helm's manifests on stdin, the kept objects on stdout.
func runHelmPostRender(group string) int {
	if err := helmPostRender(group, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "post-render: %v\n", err)
		return 1
	}
	return 0
}

// helmPostRender writes to out the objects of in that a release in a test namespace can own
// beside the shared podpilot: the CRD, moved to group so that the shared CRD (and every other
// test's PodAutoscalers) is never at stake, and the generated TLS Secret. The APIServices,
// cluster-wide RBAC and Deployment would take over the shared podpilot's.
func helmPostRender(group string, in io.Reader, out io.Writer) error {
	dec := utilyaml.NewYAMLOrJSONDecoder(in, 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("decode the rendered manifests: %w", err)
		}
		switch {
		case o.GetKind() == "CustomResourceDefinition":
			plural, _, _ := strings.Cut(o.GetName(), ".")
			o.SetName(plural + "." + group)
			if err := unstructured.SetNestedField(o.Object, group, "spec", "group"); err != nil {
				return fmt.Errorf("move the CRD to %s: %w", group, err)
			}
		case o.GetKind() == "Secret" && o.GetName() == "podpilot-generated-tls":
		default:
			continue
		}
		doc, err := yaml.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("encode %s: %w", objectRef(o), err)
		}
		if _, err := fmt.Fprintf(out, "---\n%s", doc); err != nil {
			return fmt.Errorf("write %s: %w", objectRef(o), err)
		}
	}
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestChartUninstallKeepsPodAutoscalers installs the chart for real (its CRD moved to a group of
// this test by a post-renderer, with the generated TLS Secret: the rest would take over the
// shared podpilot), creates a PodAutoscaler, and shows that an upgrade keeps the generated CA,
// that helm uninstall leaves the CRD and the PodAutoscaler (helm.sh/resource-policy: keep)
// while it deletes the rest of the release, and that installing the same release again adopts
// the kept CRD (docs/install.md).
func TestChartUninstallKeepsPodAutoscalers(t *testing.T) {
	ctx := t.Context()
	ns := cluster.CreateNamespace(ctx, t, "chart-keep")
	group := ns + ".e2e.podpilot.io"
	crdName := "podautoscalers." + group
	t.Cleanup(func() {
		err := cluster.Dynamic.Resource(crdGVR).Delete(context.WithoutCancel(ctx), crdName, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete CRD %s: %v", crdName, err)
		}
	})
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{postRenderGroupEnv + "=" + group, "HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data")}
	helm := func(args ...string) []byte {
		return runHelmEnv(ctx, t, env, append(args, "--namespace", ns, "--kubeconfig", cluster.Kubeconfig)...)
	}
	// The post-renderer drops the APIServices; with them off the chart does not look at the
	// shared podpilot's, which point at another Service (docs/alongside.md).
	install := []string{"upgrade", "--install", "podpilot", chartDir, "--post-renderer", self,
		"--set", "apiServices.custom.enabled=false,apiServices.external.enabled=false"}

	helm(install...)
	waitCRDsServed(ctx, t, group+"/v1alpha1")
	pa := strings.Replace(ppaYAML("kept", "  customMetrics: [{metricName: qps, averageValue: \"1\"}]\n"),
		"autoscaling.podpilot.io/v1alpha1", group+"/v1alpha1", 1)
	if _, err := cluster.ApplyErr(ctx, ns, []byte(pa), false); err != nil {
		t.Fatalf("create a PodAutoscaler in %s: %v", group, err)
	}
	ca := generatedCA(ctx, t, ns)

	helm(install...)
	if got := generatedCA(ctx, t, ns); !bytes.Equal(got, ca) {
		t.Errorf("helm upgrade made a new CA; the APIServices' caBundle would change under running pods")
	}

	helm("uninstall", "podpilot", "--wait")
	if out := helm("list", "--short"); len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("releases after uninstall: %s", out)
	}
	framework.WaitFor(ctx, t, 30*time.Second, "the release's Secret deleted", func(ctx context.Context) (bool, string, error) {
		_, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "podpilot-generated-tls", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err), nil
	})
	if _, err := cluster.Dynamic.Resource(crdGVR).Get(ctx, crdName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the CRD is gone after helm uninstall: %v", err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1alpha1", Resource: "podautoscalers"}
	if _, err := cluster.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("the PodAutoscaler is gone after helm uninstall: %v", err)
	}

	helm(install...) // adopts the kept CRD: it still carries the release's ownership metadata
	helm("uninstall", "podpilot", "--wait")
	if _, err := cluster.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, "kept", metav1.GetOptions{}); err != nil {
		t.Errorf("the PodAutoscaler is gone after a second install and uninstall: %v", err)
	}
}

// generatedCA returns the CA of the chart's generated TLS Secret in ns.
func generatedCA(ctx context.Context, t *testing.T, ns string) []byte {
	t.Helper()
	s, err := cluster.Client.CoreV1().Secrets(ns).Get(ctx, "podpilot-generated-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the generated TLS Secret: %v", err)
	}
	if len(s.Data["ca.crt"]) == 0 {
		t.Fatalf("the generated TLS Secret has no ca.crt")
	}
	return s.Data["ca.crt"]
}
