package prometheus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

func TestWithTenantSendsTheTenantOnEveryCall(t *testing.T) {
	srv, seen := fakeProm(t, "", nil)
	base := newTestClient(t, optionsFor(srv.URL), nil).(TenantClient)
	for _, tc := range []struct {
		name   string
		client Client
		want   []string
	}{
		{name: "a client without a tenant sends no X-Scope-OrgID", client: base, want: []string{"", "", ""}},
		{name: "a tenant's client sends its tenant on query, series and query_range alike", client: base.WithTenant("team-a"), want: []string{"team-a", "team-a", "team-a"}},
		{name: "another tenant's client made from the same base sends only its own", client: base.WithTenant("team-b"), want: []string{"team-b", "team-b", "team-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drain(seen)
			for _, op := range []string{opQuery, opSeries, opQueryRange} {
				_ = callOp(t.Context(), tc.client, op, "up") // query_range answers 404 here: only the header matters
			}
			var got []string
			for _, r := range drain(seen) {
				got = append(got, strings.Join(r.header.Values(TenantHeader), ","))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("X-Scope-OrgID per call (-want +got):\n%s", diff)
			}
		})
	}
}

func TestForEndpointTakesNoneOfTheDefaultsCredentials(t *testing.T) {
	dir := t.TempDir()
	keyFile, tokenFile := filepath.Join(dir, "key"), filepath.Join(dir, "token")
	for f, v := range map[string]string{keyFile: "gateway-key\n", tokenFile: "mimir-token\n"} {
		if err := os.WriteFile(f, []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv, seen := fakeProm(t, "", nil)
	o := optionsFor("http://default.invalid/")
	o.Headers = []string{"X-Default=secret"}
	base, err := o.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := base.ForEndpoint(Endpoint{Name: "mimir", URL: srv.URL, HeaderFiles: map[string]string{"X-Gateway-Key": keyFile}, BearerTokenFile: tokenFile})
	if err != nil {
		t.Fatalf("ForEndpoint: %v", err)
	}
	if cfg.Timeout != base.Timeout || cfg.Method != base.Method {
		t.Errorf("timeout, method = %s, %s; want the default backend's %s, %s", cfg.Timeout, cfg.Method, base.Timeout, base.Method)
	}
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(t.Context(), "up", time.Time{}); err != nil {
		t.Fatal(err)
	}
	h := drain(seen)[0].header
	got := map[string]string{"X-Gateway-Key": h.Get("X-Gateway-Key"), "Authorization": h.Get("Authorization"), "X-Default": h.Get("X-Default")}
	want := map[string]string{"X-Gateway-Key": "gateway-key", "Authorization": "Bearer mimir-token", "X-Default": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}

	if own, err := base.ForEndpoint(Endpoint{Name: "mimir", URL: srv.URL, Timeout: 3 * time.Second}); err != nil || own.Timeout != 3*time.Second {
		t.Errorf("ForEndpoint with its own timeout = %v, %v; want 3s", own, err)
	}
	_, err = base.ForEndpoint(Endpoint{Name: "mimir", URL: srv.URL, HeaderFiles: map[string]string{"X-Gateway-Key": filepath.Join(dir, "missing")}})
	if err == nil || !strings.Contains(err.Error(), "backend mimir: header X-Gateway-Key:") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("ForEndpoint with an unreadable header file = %v, want an error naming the backend, the header and the file", err)
	}
}

func TestNamedBackendIsInErrorsAndMetrics(t *testing.T) {
	srv, _ := fakeProm(t, "", respondWith(503, "down"))
	reg := metrics.NewKubeRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	base, err := optionsFor(srv.URL).Config()
	if err != nil {
		t.Fatal(err)
	}
	named, err := base.ForEndpoint(Endpoint{Name: "mimir", URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []*Config{base, named} {
		c, err := New(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Query(t.Context(), "up", time.Time{})
		prefix := `query "up": prometheus unavailable`
		if cfg.Backend != "" {
			prefix = `backend mimir: ` + prefix
		}
		assertError(t, err, ErrUnavailable, prefix, "503")
	}
	want := `
# HELP podpilot_prometheus_client_request_errors_total [ALPHA] Failed calls to the Prometheus HTTP API, by backend, operation and outcome.
# TYPE podpilot_prometheus_client_request_errors_total counter
podpilot_prometheus_client_request_errors_total{backend="default",operation="query",outcome="unavailable"} 1
podpilot_prometheus_client_request_errors_total{backend="mimir",operation="query",outcome="unavailable"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "podpilot_prometheus_client_request_errors_total"); err != nil {
		t.Error(err)
	}
}
