package framework

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KEDANamespace is KEDA's cluster object namespace (KEDA_CLUSTER_OBJECT_NAMESPACE, where it
// would read the Secrets of ClusterTriggerAuthentications) and its pod namespace.
const KEDANamespace = "keda"

// kedaModule is the module hack/tools/keda pins.
const kedaModule = "github.com/kedacore/keda/v2"

// KEDA is KEDA's operator and metrics server (built by `hack/build-tools.sh keda`) running on the
// host against the cluster, as KEDA's own `make run` runs its operator: no pods, no cert rotation,
// no APIService of its own. The operator reconciles ScaledObjects into HPAs and serves their
// metrics to the metrics server over its gRPC Metrics Service (mutual TLS); the metrics server is
// an external-metrics adapter on 127.0.0.1:Port, with a certificate for 127.0.0.1 signed by
// CAFile. podpilot forwards to it.
type KEDA struct {
	// Port is the metrics server's secure port on 127.0.0.1.
	Port int
	// CAFile verifies the metrics server's serving certificate (and both ends of the gRPC link).
	CAFile              string
	operator, metricsSv *hostProcess
}

// hostProcess is a process startLogged started.
type hostProcess struct {
	cmd     *exec.Cmd
	LogPath string
	pidFile string
	done    chan struct{}
}

func (c *Cluster) startHostProcess(name string, cmd *exec.Cmd) (*hostProcess, error) {
	p := &hostProcess{cmd: cmd, LogPath: filepath.Join(c.StateDir, "logs", name+".log"),
		pidFile: filepath.Join(c.StateDir, "pids", name+".pid"), done: make(chan struct{})}
	if err := startLogged(cmd, p.LogPath, p.pidFile, p.done); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	return p, nil
}

func (p *hostProcess) stop() { stopLogged(p.cmd, p.pidFile, p.done) }

// InstallKEDACRDs applies KEDA's CRDs as its release does (`kubectl apply --server-side -k
// config/crd`, kustomize's patches included) from the module cache directory of the KEDA module
// hack/tools/keda pins, never a copy kept here, and waits until they are Established.
func (c *Cluster) InstallKEDACRDs(ctx context.Context) error {
	dir, err := kedaModuleDir(ctx)
	if err != nil {
		return err
	}
	out, err := c.Kubectl(ctx, "apply", "--server-side", "--force-conflicts", "--field-manager="+fieldManager,
		"-k", filepath.Join(dir, "config", "crd"), "-o", "name")
	if err != nil {
		return fmt.Errorf("apply KEDA's CRDs: %w", err)
	}
	names := strings.Fields(string(out))
	if len(names) == 0 {
		return fmt.Errorf("apply KEDA's CRDs from %s: nothing applied", dir)
	}
	if _, err := c.Kubectl(ctx, append([]string{"wait", "--for=condition=Established", "--timeout=60s"}, names...)...); err != nil {
		return fmt.Errorf("KEDA's CRDs Established: %w", err)
	}
	c.Mapper.Reset()
	return nil
}

// kedaModuleDir returns the module cache directory of the KEDA module hack/tools/keda requires
// (downloaded by `hack/build-tools.sh keda`).
func kedaModuleDir(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", kedaModule)
	cmd.Dir = filepath.Join(RepoRoot(), "hack", "tools", "keda")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locate %s in the module cache (hack/tools/keda): %w: %s", kedaModule, err, out)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("decode go mod download's answer for %s: %w", kedaModule, err)
	}
	if m.Dir == "" {
		return "", fmt.Errorf("locate %s in the module cache: %s", kedaModule, m.Error)
	}
	return m.Dir, nil
}

// StartKEDA starts KEDA's operator and then its metrics server with the cluster's admin
// kubeconfig, and waits until both serve. What they need on the host, besides the kubeconfig:
//   - WATCH_NAMESPACE set (empty: all namespaces) for both, KEDA_CLUSTER_OBJECT_NAMESPACE and
//     POD_NAMESPACE for the operator (in a pod, the service account's namespace file);
//   - one certificate directory (--cert-dir: ca.crt, tls.crt, tls.key) for both, the
//     certificate valid for 127.0.0.1 for server and client use: the gRPC Metrics Service is
//     mutual TLS, and the metrics server also serves its API with it;
//   - every listener moved off its default port (:8080, :8081, :9666, :6443) to a free one on
//     127.0.0.1 (the metrics server's own /metrics listener, --port, binds all addresses).
func (c *Cluster) StartKEDA(ctx context.Context) (*KEDA, error) {
	operatorBin, err := ToolPath("KEDA_OPERATOR")
	if err != nil {
		return nil, err
	}
	adapterBin, err := ToolPath("KEDA_ADAPTER")
	if err != nil {
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KEDANamespace}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create namespace %s: %w", KEDANamespace, err)
	}
	ports := make([]int, 4) // gRPC, operator probes, metrics server, metrics server's /metrics
	for i := range ports {
		if ports[i], err = FreePort(); err != nil {
			return nil, err
		}
	}
	certDir := filepath.Join(c.StateDir, "keda-certs-"+strconv.Itoa(ports[0]))
	caPEM, err := writeKEDACertificates(certDir)
	if err != nil {
		return nil, err
	}
	k := &KEDA{Port: ports[2], CAFile: filepath.Join(certDir, "ca.crt")}
	env := append(os.Environ(), "KUBECONFIG="+c.Kubeconfig, "WATCH_NAMESPACE=",
		"KEDA_CLUSTER_OBJECT_NAMESPACE="+KEDANamespace, "POD_NAMESPACE="+KEDANamespace)
	op := exec.Command(operatorBin, "--cert-dir="+certDir, "--enable-cert-rotation=false", "--leader-elect=false",
		"--metrics-bind-address=0", fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[1]),
		fmt.Sprintf("--metrics-service-bind-address=127.0.0.1:%d", ports[0]))
	op.Env = env
	if k.operator, err = c.startHostProcess(fmt.Sprintf("keda-operator-%d", ports[0]), op); err != nil {
		return nil, err
	}
	if err := waitHTTPReady(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]), k.operator); err != nil {
		k.Stop()
		return nil, err
	}
	kc := c.Kubeconfig
	ms := exec.Command(adapterBin, "--secure-port="+strconv.Itoa(k.Port), "--bind-address=127.0.0.1",
		"--cert-dir="+certDir, "--tls-cert-file="+filepath.Join(certDir, "tls.crt"),
		"--tls-private-key-file="+filepath.Join(certDir, "tls.key"),
		"--lister-kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		fmt.Sprintf("--metrics-service-address=127.0.0.1:%d", ports[0]), "--port="+strconv.Itoa(ports[3]))
	ms.Env = env
	if k.metricsSv, err = c.startHostProcess(fmt.Sprintf("keda-metrics-server-%d", k.Port), ms); err != nil {
		k.Stop()
		return nil, err
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", k.Port)
	if err := waitTLSReady(ctx, c.Config, caPEM, url, k.metricsSv.done, "KEDA metrics server", k.metricsSv.LogPath); err != nil {
		k.Stop()
		return nil, err
	}
	return k, nil
}

// waitHTTPReady waits until url answers 200, failing early if p exits.
func waitHTTPReady(ctx context.Context, url string, p *hostProcess) error {
	return waitReady(ctx, &http.Client{Timeout: 5 * time.Second}, url, p.done, url, p.LogPath)
}

// OperatorLog is the operator's log file.
func (k *KEDA) OperatorLog() string { return k.operator.LogPath }

// MetricsServerLog is the metrics server's log file.
func (k *KEDA) MetricsServerLog() string { return k.metricsSv.LogPath }

// StopMetricsServer terminates KEDA's metrics server (the operator runs on) and waits for it to exit.
func (k *KEDA) StopMetricsServer() {
	if k.metricsSv != nil {
		k.metricsSv.stop()
	}
}

// Stop terminates both processes and waits for them to exit.
func (k *KEDA) Stop() {
	k.StopMetricsServer()
	if k.operator != nil {
		k.operator.stop()
	}
}

// writeKEDACertificates writes into dir a CA (ca.crt) and a key and certificate signed by it
// (tls.key, tls.crt) for 127.0.0.1, for server and client use, and returns the CA's PEM.
func writeKEDACertificates(dir string) ([]byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("KEDA certificate dir: %w", err)
	}
	caPEM, certPEM, keyPEM, err := signedCertificate(&x509.Certificate{
		Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, fmt.Errorf("KEDA certificates: %w", err)
	}
	files := map[string][]byte{"ca.crt": caPEM, "tls.crt": certPEM, "tls.key": keyPEM}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, fmt.Errorf("write KEDA %s: %w", name, err)
		}
	}
	return caPEM, nil
}
