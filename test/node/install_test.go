package node

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	podpilotNS = "podpilot-system"
	release    = "podpilot"
	// servingSecret holds podpilot's serving certificate, signed by a CA the
	// test makes; the APIServices carry that CA as their caBundle.
	servingSecret = "podpilot-serving"
	// syncPeriod is the installed podpilot's --autoscaler-sync-period.
	syncPeriod = 2 * time.Second
)

// installed is the image tag of the release the tests installed, if any.
var installed string

// chartValues are the values the tests install the chart with: the image
// this run built, Prometheus through its Service, a verified serving
// certificate, and metrics.k8s.io from the cAdvisor series.
func chartValues(tag string, caPEM []byte) ([]byte, error) {
	withResources := rules.DefaultYAML + framework.ResourceRulesYAML
	v := map[string]any{
		"image":           map[string]any{"repository": "localhost/podpilot/podpilot", "tag": tag, "pullPolicy": "Never"},
		"prometheus":      map[string]any{"url": cluster.Node.PrometheusServiceURL},
		"resourceMetrics": map[string]any{"enabled": true},
		"rules":           map[string]any{"content": withResources},
		"tls":             map[string]any{"secretName": servingSecret, "caBundle": base64.StdEncoding.EncodeToString(caPEM)},
		"extraArgs": []string{
			"--autoscaler-sync-period=" + syncPeriod.String(), "--metrics-relist-interval=5s", "-v=2",
		},
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("chart values: %w", err)
	}
	return b, nil
}

// ensurePodpilot installs the chart with this run's image unless it is
// installed already.
func ensurePodpilot(ctx context.Context, t *testing.T) {
	t.Helper()
	if installed == imageTag {
		return
	}
	helmInstall(ctx, t, imageTag)
}

// helmInstall runs `helm upgrade --install` with tag and waits until the
// rollout is done.
func helmInstall(ctx context.Context, t *testing.T, tag string) {
	t.Helper()
	caPEM := ensureServingSecret(ctx, t)
	values, err := chartValues(tag, caPEM)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(file, values, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := cluster.Helm(ctx, "upgrade", "--install", release, filepath.Join("charts", "podpilot"),
		"--namespace", podpilotNS, "--create-namespace", "-f", file, "--wait", "--timeout", "4m"); err != nil {
		t.Fatalf("%v\n%s", err, describePodpilotPods(ctx))
	}
	installed = tag
	t.Logf("helm upgrade --install with image tag %s: done in %s", tag, time.Since(start).Round(100*time.Millisecond))
}

// uninstallPodpilot removes the release (and so the CRD and the PodAutoscalers).
func uninstallPodpilot(ctx context.Context, t *testing.T) {
	t.Helper()
	if installed == "" {
		return
	}
	if _, err := cluster.Helm(ctx, "uninstall", release, "--namespace", podpilotNS, "--wait", "--timeout", "2m"); err != nil {
		t.Fatal(err)
	}
	installed = ""
}

// ensureServingSecret creates podpilot's namespace and serving certificate
// once, and returns the CA that signed it.
func ensureServingSecret(ctx context.Context, t *testing.T) []byte {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: podpilotNS}}
	if _, err := cluster.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	secrets := cluster.Client.CoreV1().Secrets(podpilotNS)
	if s, err := secrets.Get(ctx, servingSecret, metav1.GetOptions{}); err == nil {
		return s.Data["ca.crt"]
	}
	caPEM, certPEM, keyPEM, err := servingCertificate("podpilot." + podpilotNS + ".svc")
	if err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: servingSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": caPEM},
	}
	if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return caPEM
}

// servingCertificate makes a CA and a serving certificate for dnsName
// signed by it, PEM-encoded.
func servingCertificate(dnsName string) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "podpilot-node-test-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate serving key: %w", err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dnsName},
		DNSNames:  []string{dnsName, dnsName + ".cluster.local"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign serving certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encode serving key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// podpilotPods lists podpilot's pods that are not being deleted.
func podpilotPods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := cluster.Client.CoreV1().Pods(podpilotNS).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=podpilot"})
	if err != nil {
		return nil, fmt.Errorf("list podpilot pods: %w", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// describePodpilotPods summarizes podpilot's pods for a failure message.
func describePodpilotPods(ctx context.Context) string {
	out, err := cluster.Kubectl(ctx, "-n", podpilotNS, "get", "pods,events", "-o", "wide")
	if err != nil {
		return err.Error()
	}
	return string(out)
}

// leaseHolder returns the pod holding podpilot's Lease (its identity is the
// pod's hostname, then a suffix).
func leaseHolder(ctx context.Context) (string, error) {
	l, err := cluster.Client.CoordinationV1().Leases(podpilotNS).Get(ctx, "podpilot", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get Lease %s/podpilot: %w", podpilotNS, err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
		return "", nil
	}
	pod, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return pod, nil
}
