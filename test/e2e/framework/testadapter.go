package framework

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
)

// TestAdapter is the custom-metrics-apiserver's test adapter (built by `hack/build-tools.sh
// test-adapter`) running on the host: a real external-metrics adapter, serving the fixed
// external metrics my-external-metric (42 for foo=bar, 43 for foo=baz) and
// other-external-metric (44), with a certificate for 127.0.0.1 signed by CAFile. It is not
// registered as an APIService: podpilot forwards to it. It also listens on :8080 for test
// writes of custom metrics (hard-coded upstream).
type TestAdapter struct {
	// Port is its secure port on 127.0.0.1.
	Port int
	// CAFile verifies its serving certificate.
	CAFile  string
	LogPath string
	cmd     *exec.Cmd
	pidFile string
	done    chan struct{}
}

// StartTestAdapter starts the test adapter with the cluster's admin kubeconfig for its
// delegated authentication and authorization, and waits until it serves.
func (c *Cluster) StartTestAdapter(ctx context.Context) (*TestAdapter, error) {
	bin, err := ToolPath("TEST_ADAPTER")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	name := "test-adapter-" + strconv.Itoa(port)
	dir := filepath.Join(c.StateDir, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("test adapter dir: %w", err)
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, fmt.Errorf("test adapter certificate: %w", err)
	}
	a := &TestAdapter{Port: port, CAFile: filepath.Join(dir, "tls.crt"), LogPath: filepath.Join(c.StateDir, "logs", name+".log"),
		pidFile: filepath.Join(c.StateDir, "pids", name+".pid"), done: make(chan struct{})}
	keyFile := filepath.Join(dir, "tls.key")
	if err := os.WriteFile(a.CAFile, certPEM, 0o644); err != nil {
		return nil, fmt.Errorf("write test adapter certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("write test adapter key: %w", err)
	}
	a.cmd = exec.Command(bin, "--secure-port="+strconv.Itoa(port), "--bind-address=127.0.0.1",
		"--tls-cert-file="+a.CAFile, "--tls-private-key-file="+keyFile, "--lister-kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig, "--v=2")
	if err := startLogged(a.cmd, a.LogPath, a.pidFile, a.done); err != nil {
		return nil, fmt.Errorf("start test adapter: %w", err)
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", a.Port)
	if err := waitTLSReady(ctx, c.Config, certPEM, url, a.done, "test adapter", a.LogPath); err != nil {
		a.Stop()
		return nil, err
	}
	return a, nil
}

// waitTLSReady waits until url answers 200 over TLS verified with the CA ca, presenting the
// client certificate of cfg (the cluster's admin), failing early if done is closed (the process
// named what, logging to logPath, exited).
func waitTLSReady(ctx context.Context, cfg *rest.Config, ca []byte, url string, done <-chan struct{}, what, logPath string) error {
	tlsCfg, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return fmt.Errorf("client certificate for the %s: %w", what, err)
	}
	tlsCfg = tlsCfg.Clone()
	tlsCfg.RootCAs = x509.NewCertPool()
	tlsCfg.RootCAs.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	return waitReady(ctx, client, url, done, what, logPath)
}

// waitReady waits until url answers 200 through client, failing early if done is closed (the
// process named what, logging to logPath, exited).
func waitReady(ctx context.Context, client *http.Client, url string, done <-chan struct{}, what, logPath string) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-done:
			return false, fmt.Errorf("%s exited; log %s", what, logPath)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready (log %s): %w", what, logPath, err)
	}
	return nil
}

// Stop terminates the test adapter and waits for it to exit.
func (a *TestAdapter) Stop() { stopLogged(a.cmd, a.pidFile, a.done) }
