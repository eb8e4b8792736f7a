package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// serviceName is the name the kube-apiserver's aggregator expects podpilot's certificate to
// carry: <service>.<namespace>.svc of the APIServices' service.
const serviceName = "podpilot." + podpilotNamespace + ".svc"

// TestChartVerifiesTLSByDefault: with the default values the chart generates a CA and a serving
// certificate, puts the CA in every APIService's caBundle with no insecureSkipTLSVerify, and
// podpilot serves the certificate so that a client verifying like the aggregator (the caBundle as
// the only root, the Service's DNS name) accepts it and one expecting another name does not.
// Skipping verification needs tls.insecureSkipTLSVerify, and contradicts a certificate source.
func TestChartVerifiesTLSByDefault(t *testing.T) {
	ctx := t.Context()
	objs := renderChart(ctx, t)
	secret := find(t, objs, "Secret", "podpilot-generated-tls")
	data := map[string][]byte{}
	for _, key := range []string{"ca.crt", "tls.crt", "tls.key"} {
		v, _, _ := unstructured.NestedString(secret.Object, "data", key)
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil || len(b) == 0 {
			t.Fatalf("Secret podpilot-generated-tls %s: %v", key, err)
		}
		data[key] = b
	}
	caBundle := base64.StdEncoding.EncodeToString(data["ca.crt"])
	apiServices := 0
	for _, o := range objs {
		if o.GetKind() != "APIService" {
			continue
		}
		apiServices++
		ca, _, _ := unstructured.NestedString(o.Object, "spec", "caBundle")
		if _, skip, _ := unstructured.NestedFieldNoCopy(o.Object, "spec", "insecureSkipTLSVerify"); skip || ca != caBundle {
			t.Errorf("%s: insecureSkipTLSVerify set %t, caBundle is the generated CA %t", objectRef(o), skip, ca == caBundle)
		}
	}
	if apiServices == 0 {
		t.Fatal("no APIService rendered")
	}
	checkDeploymentServesSecret(t, find(t, objs, "Deployment", "podpilot"), "podpilot-generated-tls")

	t.Run("the certificate verifies against the caBundle for the Service's name", func(t *testing.T) {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(data["ca.crt"]) {
			t.Fatal("ca.crt holds no certificate")
		}
		block, _ := pem.Decode(data["tls.crt"])
		if block == nil {
			t.Fatal("tls.crt holds no PEM block")
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: serviceName, Roots: roots}); err != nil {
			t.Errorf("verify for %s: %v", serviceName, err)
		}
		t.Logf("certificate for %v, valid until %s", cert.DNSNames, cert.NotAfter.Format(time.DateOnly))
	})
	t.Run("podpilot serves it and an aggregator-like client accepts it", func(t *testing.T) {
		testServesGeneratedCertificate(ctx, t, data)
	})
	t.Run("tls.insecureSkipTLSVerify turns verification off, and only alone", func(t *testing.T) {
		for _, o := range renderChart(ctx, t, "--set", "tls.insecureSkipTLSVerify=true") {
			skip, _, _ := unstructured.NestedBool(o.Object, "spec", "insecureSkipTLSVerify")
			if (o.GetKind() == "APIService" && !skip) || (o.GetKind() == "Secret" && o.GetName() == "podpilot-generated-tls") {
				t.Errorf("%s with tls.insecureSkipTLSVerify: insecureSkipTLSVerify %t", objectRef(o), skip)
			}
		}
		out, err := helmTemplateErr(ctx, t, "--set", "tls.insecureSkipTLSVerify=true,tls.certManager.enabled=true")
		if err == nil || !strings.Contains(out, "tls.insecureSkipTLSVerify turns verification off") {
			t.Errorf("insecureSkipTLSVerify with cert-manager: %v\n%s", err, out)
		}
	})
}

// TestChartImageAndPriorityDefaults: the image tag follows the chart's appVersion unless
// image.tag is set, and the pods run at system-cluster-critical unless priorityClassName is
// set, "" for none.
func TestChartImageAndPriorityDefaults(t *testing.T) {
	ctx := t.Context()
	chart, err := os.ReadFile(filepath.Join(framework.RepoRoot(), chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(chart, &meta); err != nil || meta.AppVersion == "" {
		t.Fatalf("Chart.yaml appVersion %q: %v", meta.AppVersion, err)
	}
	for _, tc := range []struct {
		name            string
		args            []string
		image, priority string
	}{
		{"defaults", nil, "ghcr.io/podpilot/podpilot:" + meta.AppVersion, "system-cluster-critical"},
		{"image.tag and priorityClassName set", []string{"--set", "image.tag=v9.9.9,priorityClassName=podpilot"}, "ghcr.io/podpilot/podpilot:v9.9.9", "podpilot"},
		{"priorityClassName empty", []string{"--set", "priorityClassName="}, "ghcr.io/podpilot/podpilot:" + meta.AppVersion, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := find(t, renderChart(ctx, t, tc.args...), "Deployment", "podpilot")
			containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
			image, _, _ := unstructured.NestedString(containers[0].(map[string]any), "image")
			priority, _, _ := unstructured.NestedString(d.Object, "spec", "template", "spec", "priorityClassName")
			if image != tc.image || priority != tc.priority {
				t.Errorf("image %q, priorityClassName %q; want %q, %q", image, priority, tc.image, tc.priority)
			}
		})
	}
}

// find returns the rendered object of kind and name.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// checkDeploymentServesSecret checks that podpilot's container serves the certificate of
// Secret secret, and that a new certificate rolls the pods.
func checkDeploymentServesSecret(t *testing.T, d *unstructured.Unstructured, secret string) {
	t.Helper()
	spec, _, _ := unstructured.NestedMap(d.Object, "spec", "template", "spec")
	containers, _, _ := unstructured.NestedSlice(spec, "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	for _, want := range []string{"--tls-cert-file=/var/run/podpilot/tls/tls.crt", "--tls-private-key-file=/var/run/podpilot/tls/tls.key"} {
		if !slices.Contains(args, want) {
			t.Errorf("podpilot args %q lack %s", args, want)
		}
	}
	volumes, _, _ := unstructured.NestedSlice(spec, "volumes")
	if !slices.ContainsFunc(volumes, func(v any) bool {
		name, _, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName")
		return name == secret
	}) {
		t.Errorf("no volume of Secret %s in %v", secret, volumes)
	}
	if sum, _, _ := unstructured.NestedString(d.Object, "spec", "template", "metadata", "annotations", "podpilot.io/tls-sha256"); sum == "" {
		t.Error("no podpilot.io/tls-sha256 annotation: a new certificate would not roll the pods")
	}
}

// testServesGeneratedCertificate runs podpilot with the generated certificate and fetches
// /livez trusting only the CA, as the aggregator dials a Service: by the Service's DNS name.
func testServesGeneratedCertificate(ctx context.Context, t *testing.T, data map[string][]byte) {
	dir := t.TempDir()
	for name, b := range data {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := cluster.StartPodpilot(t, podpilotBinary, "--autoscaler-enabled=false",
		"--tls-cert-file="+filepath.Join(dir, "tls.crt"), "--tls-private-key-file="+filepath.Join(dir, "tls.key"))
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(data["ca.crt"])
	get := func(serverName string) error {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12},
		}}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/livez", p.Port), nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	if err := get(serviceName); err != nil {
		t.Errorf("GET /livez as %s, verifying against the caBundle: %v", serviceName, err)
	}
	if err := get("podpilot.elsewhere.svc"); err == nil {
		t.Error("the certificate verified for another Service's name: verification is not checking names")
	}
}

// helmTemplateErr runs helm template with args and returns its combined output and error.
func helmTemplateErr(ctx context.Context, t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.CommandContext(ctx, helmBinary(t), append([]string{"template", "podpilot", chartDir, "--namespace", podpilotNamespace}, args...)...)
	cmd.Dir = framework.RepoRoot()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestChartRefusesUnsafeValues: values that render valid objects but run unsafely fail the
// render (templates/validate.yaml), naming the values and the fix; their safe neighbours render.
func TestChartRefusesUnsafeValues(t *testing.T) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		set  string
		want string // in the error; "" for a rendering that succeeds
	}{
		{"leader election off with 2 replicas: both would scale", "leaderElection.enabled=false",
			"leaderElection.enabled=false with replicas=2: every replica would run the autoscaler"},
		{"leader election off with 1 replica and no PodDisruptionBudget", "leaderElection.enabled=false,replicas=1,podDisruptionBudget.enabled=false", ""},
		{"1 replica with minAvailable 1: drains blocked", "replicas=1",
			"podDisruptionBudget.minAvailable=1 with replicas=1: the PodDisruptionBudget allows no eviction and blocks node drains"},
		{"minAvailable 100%: drains blocked", "podDisruptionBudget.minAvailable=100%",
			"podDisruptionBudget.minAvailable=100% with replicas=2"},
		{"1 replica without a PodDisruptionBudget", "replicas=1,podDisruptionBudget.enabled=false", ""},
		{"3 replicas with minAvailable 2", "replicas=3,podDisruptionBudget.minAvailable=2", ""},
		{"minAvailable 50%", "podDisruptionBudget.minAvailable=50%", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := helmTemplateErr(ctx, t, "--set", tc.set)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("--set %s: %v\n%s", tc.set, err, out)
			case tc.want != "" && (err == nil || !strings.Contains(out, tc.want)):
				t.Errorf("--set %s: error %v, output\n%s\nwant an error with %q", tc.set, err, out, tc.want)
			}
		})
	}
}
