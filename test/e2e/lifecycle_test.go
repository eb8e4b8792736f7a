package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// TestBinaryCarriesTheVersionStampOfMakeBuild checks that the binary the suite runs reports
// the version make build stamps, not the library's placeholder.
func TestBinaryCarriesTheVersionStampOfMakeBuild(t *testing.T) {
	want, err := exec.CommandContext(t.Context(), "make", "-C", framework.RepoRoot(), "--no-print-directory", "-s", "version").Output()
	if err != nil {
		t.Fatalf("make version: %v", err)
	}
	got, err := exec.CommandContext(t.Context(), podpilotBinary, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("podpilot --version: %v: %s", err, got)
	}
	if v := strings.TrimSpace(string(want)); v == "" || !strings.Contains(string(got), v) || strings.Contains(string(got), "$Format") {
		t.Errorf("podpilot --version = %q, want the make build version %q", got, v)
	}
}

// TestAPIServerThatCannotStartStopsEverythingAndExitsNonZero starts podpilot where its API
// server cannot start: the process must exit non-zero and name the cause.
func TestAPIServerThatCannotStartStopsEverythingAndExitsNonZero(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  []string
		cause string
	}{
		{
			name:  "the secure port is taken",
			args:  []string{"--secure-port=" + strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)},
			cause: "address already in use",
		},
		{
			name:  "the serving certificate is bad",
			args:  []string{"--tls-cert-file=" + garbage, "--tls-private-key-file=" + garbage},
			cause: "certificate",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := cluster.StartPodpilot(t, podpilotBinary, tt.args...)
			code := p.ExitCode(time.Minute)
			if code <= 0 {
				t.Fatalf("exit code = %d, want non-zero (-1: still running); log:\n%s", code, p.LogTail(3000))
			}
			if log := p.LogTail(8000); !strings.Contains(log, tt.cause) {
				t.Errorf("log does not name the cause %q:\n%s", tt.cause, log)
			}
		})
	}
}

// TestInheritedAPIServerFlagsWork starts podpilot with the apiserver flags docs/flags.txt
// lists (inherited from the apiserver library) set to non-default values, and checks that it
// serves; --cert-dir must write the self-signed pair there and serve with it.
func TestInheritedAPIServerFlagsWork(t *testing.T) {
	dir := t.TempDir()
	pki := filepath.Join(cluster.StateDir, "pki")
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(dir, "certs")
	groups := []struct {
		name  string
		args  []string
		files []string // files the flags must create
	}{
		{name: "--cert-dir", args: []string{"--cert-dir=" + certDir},
			files: []string{filepath.Join(certDir, "apiserver.crt"), filepath.Join(certDir, "apiserver.key")}},
		{name: "audit log", args: []string{"--audit-policy-file=" + policy, "--audit-log-path=" + filepath.Join(dir, "audit.log"),
			"--audit-log-maxage=1", "--audit-log-maxbackup=1", "--audit-log-maxsize=10", "--audit-log-format=json",
			"--audit-log-mode=batch", "--audit-log-batch-max-size=10", "--audit-log-batch-max-wait=1s", "--audit-log-compress",
			"--audit-log-truncate-enabled", "--audit-log-version=audit.k8s.io/v1"},
			files: []string{filepath.Join(dir, "audit.log")}},
		{name: "authentication and authorization", args: []string{
			"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
			"--requestheader-client-ca-file=" + filepath.Join(pki, "front-proxy-ca.crt"),
			"--requestheader-allowed-names=front-proxy-client", "--requestheader-username-headers=X-Remote-User",
			"--requestheader-group-headers=X-Remote-Group", "--requestheader-extra-headers-prefix=X-Remote-Extra-",
			"--authentication-token-webhook-cache-ttl=30s", "--authentication-tolerate-lookup-failure=false",
			"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
			"--authorization-webhook-cache-authorized-ttl=30s", "--authorization-webhook-cache-unauthorized-ttl=5s",
		}},
		{name: "serving", args: []string{"--tls-min-version=VersionTLS12",
			"--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
			"--http2-max-streams-per-connection=100", "--disable-http2-serving", "--permit-port-sharing", "--permit-address-sharing",
			"--profiling", "--contention-profiling", "--debug-socket-path=" + filepath.Join(dir, "debug.sock"),
			"--client-qps=50", "--client-burst=100", "--discovery-interval=30s", "--enable-priority-and-fairness=false",
		}},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			p := cluster.StartPodpilot(t, podpilotBinary, g.args...)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			if err := p.WaitReady(ctx, time.Minute); err != nil {
				t.Fatal(err)
			}
			code, body, err := getDirect(ctx, p, "/apis/custom.metrics.k8s.io/v1beta2")
			if err != nil || code != 200 {
				t.Errorf("GET custom.metrics.k8s.io discovery = %d %v: %.500s", code, err, body)
			}
			for _, f := range g.files { // the audit log is written in batches
				err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
					_, err := os.Stat(f)
					return err == nil, nil
				})
				if err != nil {
					t.Errorf("%s was not created: %v", f, err)
				}
			}
		})
	}
}

// getDirect sends an authorized request (the admin client certificate) to podpilot itself.
func getDirect(ctx context.Context, p *framework.Podpilot, path string) (int, string, error) {
	cfg := cluster.DirectConfig(p)
	rc, err := restClientFor(cfg)
	if err != nil {
		return 0, "", err
	}
	var code int
	body, err := rc.Get().AbsPath(path).Do(ctx).StatusCode(&code).Raw()
	return code, string(body), err
}

// restClientFor is a raw REST client for cfg.
func restClientFor(cfg *rest.Config) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	return rest.UnversionedRESTClientFor(cfg)
}
