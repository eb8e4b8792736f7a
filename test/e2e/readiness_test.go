package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podpilot/podpilot/pkg/provider/rules"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// readinessStarts is how many times TestReadyMeansAbleToAnswer starts podpilot.
const readinessStarts = 20

// servedGroupPaths are one request per served API group: discovery and a list.
var servedGroupPaths = []string{
	"/apis/custom.metrics.k8s.io/v1beta2",
	"/apis/custom.metrics.k8s.io/v1beta1",
	"/apis/external.metrics.k8s.io/v1beta1",
	"/apis/metrics.k8s.io/v1beta1",
	"/apis/metrics.k8s.io/v1beta1/nodes",
	"/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods",
}

// authorizedClients are the two ways an authorized request reaches podpilot: with the
// admin's client certificate (client CA), and as kube-apiserver's aggregator forwards it
// (front-proxy client certificate plus X-Remote-User/Group headers: request-header CA).
func authorizedClients(t *testing.T) map[string]func(ctx context.Context, port int, path string) (int, error) {
	t.Helper()
	pki := filepath.Join(cluster.StateDir, "pki")
	client := func(cert string, headers map[string]string) func(context.Context, int, string) (int, error) {
		pair, err := tls.LoadX509KeyPair(filepath.Join(pki, cert+".crt"), filepath.Join(pki, cert+".key"))
		if err != nil {
			t.Fatalf("load %s client certificate: %v", cert, err)
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			Certificates: []tls.Certificate{pair}, InsecureSkipVerify: true, //nolint:gosec // podpilot's self-signed certificate
		}}}
		return func(ctx context.Context, port int, path string) (int, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
			if err != nil {
				return 0, err
			}
			for k, v := range headers {
				req.Header.Set(k, v)
			}
			resp, err := hc.Do(req)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.StatusCode, nil
		}
	}
	return map[string]func(context.Context, int, string) (int, error){
		"client-certificate": client("admin", nil),
		"aggregator":         client("front-proxy-client", map[string]string{"X-Remote-User": "admin", "X-Remote-Group": "system:masters"}),
	}
}

// TestReadyMeansAbleToAnswer starts podpilot again and again and, from the instant /readyz
// first answers 200, sends authorized requests to every served group, directly and as the
// aggregator does: none may answer 401, 403 or 503 (issue 10: a 403 right after readyz
// passed, while delegated authentication's CAs were still loading).
func TestReadyMeansAbleToAnswer(t *testing.T) {
	rulesFile := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rulesFile, []byte(rules.DefaultYAML+framework.ResourceRulesYAML()), 0o644); err != nil {
		t.Fatal(err)
	}
	clients := authorizedClients(t)
	codes := map[int]int{}
	var bad []string
	notReadyPolls := 0
	for i := range readinessStarts {
		p, err := cluster.RunPodpilot(podpilotBinary, "--config="+rulesFile, "--autoscaler-enabled=false")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			if p.Exited() {
				return false, fmt.Errorf("podpilot exited: %s", p.LogTail(2000))
			}
			code, _, err := p.Get(ctx, "/readyz")
			if err == nil && code != http.StatusOK {
				notReadyPolls++
			}
			return err == nil && code == http.StatusOK, nil
		})
		if err != nil {
			cancel()
			p.Stop()
			t.Fatalf("start %d: podpilot never became ready: %v", i, err)
		}
		for name, get := range clients {
			for _, path := range servedGroupPaths {
				code, err := get(ctx, p.Port, path)
				if err != nil {
					bad = append(bad, fmt.Sprintf("start %d %s GET %s: %v", i, name, path, err))
					continue
				}
				codes[code]++
				if code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusServiceUnavailable {
					bad = append(bad, fmt.Sprintf("start %d %s GET %s = %d", i, name, path, code))
				}
			}
		}
		cancel()
		p.Stop()
		if len(bad) > 0 && t.Failed() {
			break
		}
	}
	var summary []string
	for code, n := range codes {
		summary = append(summary, fmt.Sprintf("%d×%d", n, code))
	}
	sort.Strings(summary)
	t.Logf("%d starts, %d requests after readyz first answered 200: %s; readyz answered not-ready %d times before",
		readinessStarts, readinessStarts*len(clients)*len(servedGroupPaths), strings.Join(summary, ", "), notReadyPolls)
	if len(bad) > 0 {
		t.Errorf("%d requests failed after readyz passed:\n%s", len(bad), strings.Join(bad, "\n"))
	}
}
