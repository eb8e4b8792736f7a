package framework

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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// The chart's release on a real node, as the real-node tests and the bench
// install it.
const (
	PodpilotNamespace = "podpilot-system"
	PodpilotRelease   = "podpilot"
	// PodpilotImageRepository is where hack/build-image.sh tags podpilot's image.
	PodpilotImageRepository = "localhost/podpilot/podpilot"
	// servingSecret holds podpilot's serving certificate, signed by a CA
	// made here; the APIServices carry that CA as their caBundle.
	servingSecret = "podpilot-serving"
)

// ChartInstall is how InstallChart installs podpilot's chart.
type ChartInstall struct {
	// Tag is the tag of PodpilotImageRepository to run (imported already).
	Tag string
	// ExtraArgs are more podpilot flags (the chart's extraArgs).
	ExtraArgs []string
	// AtDefaults keeps the chart's rules and resourceMetrics values (the
	// built-in rules, no metrics.k8s.io: beside metrics-server, as users
	// install it) instead of the cAdvisor resourceRules and metrics.k8s.io.
	AtDefaults bool
	// Values are more top-level chart values, set over the others.
	Values map[string]any
}

// InstallChart runs `helm upgrade --install charts/podpilot` into
// PodpilotNamespace, as users install it, and waits until the rollout is
// done: this run's image (never pulled), Prometheus through its Service,
// a verified serving certificate (a CA made here, no
// insecureSkipTLSVerify), and metrics.k8s.io from the kubelet's cAdvisor
// series (resourceMetrics with KubeletResourceRulesYAML).
func (c *Cluster) InstallChart(ctx context.Context, in ChartInstall) error {
	caPEM, err := c.ensureServingSecret(ctx)
	if err != nil {
		return err
	}
	v := map[string]any{
		"image":      map[string]any{"repository": PodpilotImageRepository, "tag": in.Tag, "pullPolicy": "Never"},
		"prometheus": map[string]any{"url": c.Node.PrometheusServiceURL},
		"tls":        map[string]any{"secretName": servingSecret, "caBundle": base64.StdEncoding.EncodeToString(caPEM)},
		"extraArgs":  in.ExtraArgs,
	}
	if !in.AtDefaults {
		v["resourceMetrics"] = map[string]any{"enabled": true}
		v["rules"] = map[string]any{"content": rules.DefaultYAML + KubeletResourceRulesYAML()}
	}
	for k, val := range in.Values {
		v[k] = val
	}
	values, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("chart values: %w", err)
	}
	dir, err := os.MkdirTemp("", "podpilot-values-")
	if err != nil {
		return fmt.Errorf("chart values: %w", err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	file := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(file, values, 0o600); err != nil {
		return fmt.Errorf("chart values: %w", err)
	}
	if _, err := c.Helm(ctx, "upgrade", "--install", PodpilotRelease, filepath.Join("charts", "podpilot"),
		"--namespace", PodpilotNamespace, "--create-namespace", "-f", file, "--wait", "--timeout", "4m"); err != nil {
		out, _ := c.Kubectl(ctx, "-n", PodpilotNamespace, "get", "pods,events", "-o", "wide")
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// ensureServingSecret creates podpilot's namespace and serving certificate
// once, and returns the CA that signed it.
func (c *Cluster) ensureServingSecret(ctx context.Context) ([]byte, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: PodpilotNamespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", PodpilotNamespace, err)
	}
	secrets := c.Client.CoreV1().Secrets(PodpilotNamespace)
	if s, err := secrets.Get(ctx, servingSecret, metav1.GetOptions{}); err == nil {
		return s.Data["ca.crt"], nil
	}
	caPEM, certPEM, keyPEM, err := servingCertificate("podpilot." + PodpilotNamespace + ".svc")
	if err != nil {
		return nil, err
	}
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: servingSecret},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": caPEM},
	}
	if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create Secret %s/%s: %w", PodpilotNamespace, servingSecret, err)
	}
	return caPEM, nil
}

// servingCertificate makes a CA and a serving certificate for dnsName
// signed by it, PEM-encoded.
func servingCertificate(dnsName string) (caPEM, certPEM, keyPEM []byte, err error) {
	return signedCertificate(&x509.Certificate{
		Subject: pkix.Name{CommonName: dnsName}, DNSNames: []string{dnsName, dnsName + ".cluster.local"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

// signedCertificate makes a CA and a certificate of leaf's names and uses signed by it, valid
// for a day, PEM-encoded.
func signedCertificate(leaf *x509.Certificate) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate CA key: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "podpilot-e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("generate key: %w", err)
	}
	leaf.SerialNumber = big.NewInt(2)
	leaf.NotBefore, leaf.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	leaf.KeyUsage = x509.KeyUsageDigitalSignature
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("sign certificate for %s: %w", leaf.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// PodpilotPods lists podpilot's pods that are not being deleted.
func (c *Cluster) PodpilotPods(ctx context.Context) ([]corev1.Pod, error) {
	list, err := c.Client.CoreV1().Pods(PodpilotNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=podpilot"})
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

// LeaseHolder returns the pod holding podpilot's Lease (its identity is the
// pod's hostname, then a suffix), or "" if none does.
func (c *Cluster) LeaseHolder(ctx context.Context) (string, error) {
	l, err := c.Client.CoordinationV1().Leases(PodpilotNamespace).Get(ctx, "podpilot", metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("get Lease %s/podpilot: %w", PodpilotNamespace, err)
	}
	if l.Spec.HolderIdentity == nil {
		return "", nil
	}
	pod, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return pod, nil
}
