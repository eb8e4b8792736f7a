package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// chartDir is the chart, relative to the repository root.
var chartDir = filepath.Join("charts", "podpilot")

// helmBinary returns the helm that `make tools` builds (hack/lib.sh's $HELM).
func helmBinary(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", `source hack/lib.sh && printf %s "$HELM"`)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("locate helm with hack/lib.sh: %v", err)
	}
	helm := string(out)
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm is not built (run make tools): %v", err)
	}
	return helm
}

// runHelm runs helm with args in the repository root and returns its stdout.
func runHelm(ctx context.Context, t *testing.T, args ...string) []byte {
	t.Helper()
	return runHelmEnv(ctx, t, nil, args...)
}

// runHelmEnv is runHelm with env added to the environment.
func runHelmEnv(ctx context.Context, t *testing.T, env []string, args ...string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, helmBinary(t), args...)
	cmd.Dir, cmd.Stderr, cmd.Env = framework.RepoRoot(), &stderr, append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return out
}

// renderChart renders the chart into podpilot-system with helm template, CRDs
// included, and the extra args (--set, -f).
func renderChart(ctx context.Context, t *testing.T, args ...string) []*unstructured.Unstructured {
	t.Helper()
	out := runHelm(ctx, t, append([]string{"template", "podpilot", chartDir, "--namespace", podpilotNamespace, "--include-crds"}, args...)...)
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decode helm template output: %v", err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

// byRef indexes objects by kind, namespace and name, as plain JSON values.
func byRef(t *testing.T, objs []*unstructured.Unstructured) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, o := range objs {
		var v any
		if err := json.Unmarshal(objectJSON(t, o), &v); err != nil {
			t.Fatal(err)
		}
		if _, dup := out[objectRef(o)]; dup {
			t.Errorf("%s rendered twice", objectRef(o))
		}
		out[objectRef(o)] = v
	}
	return out
}

// compareObjects fails on every object that is in one list and not the
// other, or differs.
func compareObjects(t *testing.T, wantName string, want []*unstructured.Unstructured, gotName string, got []*unstructured.Unstructured) {
	t.Helper()
	w, g := byRef(t, want), byRef(t, got)
	var refs []string
	for r := range w {
		refs = append(refs, r)
	}
	for r := range g {
		if _, ok := w[r]; !ok {
			refs = append(refs, r)
		}
	}
	slices.Sort(refs)
	for _, r := range refs {
		if diff := cmp.Diff(w[r], g[r]); diff != "" {
			t.Errorf("%s (-%s +%s):\n%s", r, wantName, gotName, diff)
		}
	}
	t.Logf("%d objects compared", len(refs))
}

// without returns objs less those of kind.
func without(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	return slices.DeleteFunc(slices.Clone(objs), func(o *unstructured.Unstructured) bool { return o.GetKind() == kind })
}

// TestChart checks charts/podpilot: helm lint passes for the default and the
// maximal values; with the default values but manifests' TLS choice
// (tls.insecureSkipTLSVerify, as manifests/ cannot make a certificate) it
// renders manifests/ object by object (less the Namespace, which Helm's
// --create-namespace makes; with namespace.create it is manifests'
// Namespace, and less the CRD's helm.sh/resource-policy), and with
// resourceMetrics on it adds overlays/resource-metrics; every rendering is
// admitted by a server-side dry-run without warnings. chart_tls_test.go
// checks the default TLS, chart_uninstall_test.go the kept CRD.
func TestChart(t *testing.T) {
	ctx := t.Context()
	maximal := filepath.Join(chartDir, "ci", "maximal-values.yaml")
	t.Run("helm lint", func(t *testing.T) {
		runHelm(ctx, t, "lint", "--strict", chartDir)
		runHelm(ctx, t, "lint", "--strict", chartDir, "-f", maximal)
	})

	base := renderKustomization(ctx, t, "manifests")
	addon := renderKustomization(ctx, t, filepath.Join("manifests", "overlays", "resource-metrics"))
	manifestsTLS := []string{"--set", "tls.insecureSkipTLSVerify=true"}
	t.Run("default values with manifests' TLS render manifests/ without its Namespace", func(t *testing.T) {
		compareObjects(t, "kustomize", without(base, "Namespace"), "helm", withoutKeep(t, renderChart(ctx, t, manifestsTLS...)))
	})
	t.Run("namespace.create renders manifests' Namespace", func(t *testing.T) {
		compareObjects(t, "kustomize", base, "helm", withoutKeep(t, renderChart(ctx, t, append(manifestsTLS, "--set", "namespace.create=true")...)))
	})
	t.Run("resourceMetrics.enabled adds overlays/resource-metrics", func(t *testing.T) {
		compareObjects(t, "kustomize", slices.Concat(without(base, "Namespace"), addon), "helm",
			withoutKeep(t, renderChart(ctx, t, append(manifestsTLS, "--set", "resourceMetrics.enabled=true")...)))
	})

	maxObjs := renderChart(ctx, t, "-f", maximal)
	t.Run("maximal values: TLS from cert-manager, dashboard, ServiceMonitor, Prometheus auth", func(t *testing.T) {
		testMaximalRendering(t, maxObjs)
	})
	secretTLS := renderChart(ctx, t, "--set", "tls.secretName=podpilot-serving,tls.caBundle=Q0EK")
	t.Run("tls.secretName sets the APIServices' caBundle", func(t *testing.T) {
		for _, o := range secretTLS {
			if o.GetKind() != "APIService" {
				continue
			}
			ca, _, _ := unstructured.NestedString(o.Object, "spec", "caBundle")
			skip, _, _ := unstructured.NestedBool(o.Object, "spec", "insecureSkipTLSVerify")
			if ca != "Q0EK" || skip {
				t.Errorf("%s: caBundle %q, insecureSkipTLSVerify %t", objectRef(o), ca, skip)
			}
		}
	})

	t.Run("every rendering is admitted by a server-side dry-run, without warnings", func(t *testing.T) {
		stubs, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "test", "e2e", "testdata", "chart-crds.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.ApplyErr(ctx, "", stubs, false); err != nil {
			t.Fatalf("apply the stand-in CRDs: %v", err)
		}
		waitCRDsServed(ctx, t, "monitoring.coreos.com/v1", "cert-manager.io/v1")
		testManifestsDryRun(t, renderChart(ctx, t, "--set", "namespace.create=true"))
		testManifestsDryRun(t, maxObjs)
		testManifestsDryRun(t, secretTLS)
	})
}

// testCertManagerChain checks the cert-manager chain rendered without an issuerRef: a
// self-signed Issuer signs a CA Certificate, whose Secret a CA Issuer signs the serving
// Certificate with, so the serving Secret's ca.crt (what the APIServices' inject-ca-from
// copies) is the CA and stays the same across the serving certificate's renewals.
func testCertManagerChain(t *testing.T, kinds map[string]*unstructured.Unstructured) {
	t.Helper()
	str := func(kind string, path ...string) string {
		o := kinds[kind]
		if o == nil {
			return ""
		}
		v, _, _ := unstructured.NestedString(o.Object, path...)
		return v
	}
	if ca := kinds["Certificate podpilot-ca"]; ca != nil {
		isCA, _, _ := unstructured.NestedBool(ca.Object, "spec", "isCA")
		if !isCA || str("Certificate podpilot-ca", "spec", "issuerRef", "name") != "podpilot-selfsigned" ||
			str("Certificate podpilot-ca", "spec", "privateKey", "rotationPolicy") != "Never" {
			t.Errorf("CA Certificate: isCA %t, spec %v; want isCA from podpilot-selfsigned, key kept", isCA, ca.Object["spec"])
		}
	}
	if got := str("Issuer podpilot-ca", "spec", "ca", "secretName"); got != str("Certificate podpilot-ca", "spec", "secretName") || got == "" {
		t.Errorf("CA Issuer signs with Secret %q, want the CA Certificate's", got)
	}
	if got := str("Certificate podpilot", "spec", "issuerRef", "name"); got != "podpilot-ca" {
		t.Errorf("serving Certificate issued by %q, want the CA Issuer podpilot-ca", got)
	}
	if o := kinds["Issuer podpilot-ca"]; o != nil {
		if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "selfSigned"); ok {
			t.Error("the serving certificate's Issuer is self-signed: its CA would change at every renewal")
		}
	}
}

// testMaximalRendering checks what the maximal values turn on.
func testMaximalRendering(t *testing.T, objs []*unstructured.Unstructured) {
	kinds := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		kinds[o.GetKind()+" "+o.GetName()] = o
		if o.GetKind() == "APIService" {
			if _, ok, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "insecureSkipTLSVerify"); ok {
				t.Errorf("%s skips TLS verification with cert-manager on", objectRef(o))
			}
			if o.GetAnnotations()["cert-manager.io/inject-ca-from"] != podpilotNamespace+"/podpilot" {
				t.Errorf("%s annotations %v, want cert-manager.io/inject-ca-from", objectRef(o), o.GetAnnotations())
			}
		}
	}
	testCertManagerChain(t, kinds)
	for _, want := range []string{"Issuer podpilot-selfsigned", "Certificate podpilot-ca", "Issuer podpilot-ca", "Certificate podpilot", "ServiceMonitor podpilot",
		"ConfigMap podpilot-dashboard", "APIService v1beta1.metrics.k8s.io", "ClusterRole podpilot:resource-metrics", "Namespace podpilot-system"} {
		if kinds[want] == nil {
			t.Errorf("no %s rendered", want)
		}
	}
	if cm := kinds["ConfigMap podpilot-dashboard"]; cm != nil {
		want, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "dashboards", "podpilot.json"))
		if err != nil {
			t.Fatal(err)
		}
		got, _, _ := unstructured.NestedString(cm.Object, "data", "podpilot.json")
		if got != string(want) || cm.GetLabels()["grafana_dashboard"] != "1" {
			t.Errorf("dashboard ConfigMap: labels %v, data equal to manifests/dashboards/podpilot.json: %t", cm.GetLabels(), got == string(want))
		}
	}
	if d := kinds["Deployment podpilot"]; d != nil {
		containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		for _, want := range []string{
			"--prometheus-url=https://thanos.monitoring.svc:9091/tenant-a/", "--prometheus-header=X-Scope-OrgID=tenant-a",
			"--prometheus-header-file=Authorization=/var/run/podpilot/prometheus/headers/0/header",
			"--prometheus-header-file=X-Api-Key=/var/run/podpilot/prometheus/headers/1/api-key",
			"--prometheus-bearer-token-file=/var/run/podpilot/prometheus/token/token",
			"--prometheus-basic-auth-password-file=/var/run/podpilot/prometheus/basic-auth/password",
			"--prometheus-ca-file=/var/run/podpilot/prometheus/ca/ca.crt",
			"--tls-cert-file=/var/run/podpilot/tls/tls.crt", "--autoscaler-per-object-metrics=false", "--autoscaler-sync-period=30s",
		} {
			if !slices.Contains(args, want) {
				t.Errorf("podpilot args %q lack %s", args, want)
			}
		}
	}
}

// withoutKeep returns objs with the CRD's helm.sh/resource-policy annotation
// removed, after checking that it is keep: the one difference between the
// chart's CRD and manifests'.
func withoutKeep(t *testing.T, objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		annotations := o.GetAnnotations()
		if annotations["helm.sh/resource-policy"] != "keep" {
			t.Errorf("%s: annotations %v, want helm.sh/resource-policy: keep", objectRef(o), annotations)
		}
		delete(annotations, "helm.sh/resource-policy")
		o.SetAnnotations(annotations)
	}
	return objs
}

// waitCRDsServed waits until the API server serves the group versions.
func waitCRDsServed(ctx context.Context, t *testing.T, gvs ...string) {
	t.Helper()
	for _, gv := range gvs {
		framework.WaitFor(ctx, t, 30*time.Second, gv+" served", func(context.Context) (bool, string, error) {
			_, err := cluster.Client.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				return false, err.Error(), nil
			}
			cluster.Mapper.Reset()
			return true, "", nil
		})
	}
}
