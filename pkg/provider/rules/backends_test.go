package rules

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pmodel "github.com/prometheus/common/model"
)

// docsExample is the rule file example of docs/backends.md's "Several backends and tenants", so
// that the docs show what loads.
func docsExample(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../../docs/backends.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Several backends and tenants")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/backends.md has no yaml block under \"## Several backends and tenants\"")
	}
	return []byte(block)
}

func TestBackendsLoadAndCompile(t *testing.T) {
	cfg, err := Load(docsExample(t))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []Backend{{
		Name: "mimir", URL: "https://mimir.monitoring:8080/prometheus", Tenant: "platform", TenantFromNamespace: true,
		Timeout:         pmodel.Duration(5 * time.Second),
		Headers:         []HeaderFromFile{{Name: "X-Gateway-Key", File: "/etc/podpilot/mimir/gateway-key"}},
		BearerTokenFile: "/etc/podpilot/mimir/token",
		TLS:             BackendTLS{CAFile: "/etc/podpilot/mimir/ca.crt"},
	}}
	if diff := cmp.Diff(want, cfg.Backends); diff != "" {
		t.Errorf("backends (-want +got):\n%s", diff)
	}
	set, err := Compile(cfg, StaticMapper(), Limits{})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	got := []string{set.Custom[0].Backend(), set.Custom[1].Backend(), set.External[0].Backend()}
	if diff := cmp.Diff([]string{"mimir", DefaultBackend, "mimir"}, got); diff != "" {
		t.Errorf("rule backends (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, set.Backends); diff != "" {
		t.Errorf("compiled backends (-want +got):\n%s", diff)
	}
}

func TestBackendsLoadErrorsNameTheField(t *testing.T) {
	const rule = "rules:\n- seriesQuery: 'x'\n  metricsQuery: x\n  backend: %s\n"
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "a rule naming no configured backend is an error naming its backend field",
			yaml: strings.ReplaceAll(rule, "%s", "thanos"),
			want: []string{`rules[0].backend: Invalid value: "thanos": unknown backend`},
		},
		{
			name: "an external rule and resourceRules naming an unknown backend name their fields",
			yaml: "externalRules:\n- {seriesQuery: x, metricsQuery: x, backend: a}\nresourceRules:\n  cpu: {containerQuery: x, nodeQuery: x, containerLabel: c}\n  memory: {containerQuery: x, nodeQuery: x, containerLabel: c}\n  window: 1m\n  backend: b\n",
			want: []string{`externalRules[0].backend: Invalid value: "a"`, `resourceRules.backend: Invalid value: "b"`},
		},
		{
			name: "two backends of one name are an error on the second",
			yaml: "backends:\n- {name: m, url: 'http://a'}\n- {name: m, url: 'http://b'}\n",
			want: []string{`backends[1].name: Duplicate value: "m"`},
		},
		{
			name: "default is the --prometheus-url backend and cannot be redefined",
			yaml: "backends:\n- {name: default, url: 'http://a'}\n",
			want: []string{`backends[0].name: Invalid value: "default"`},
		},
		{
			name: "a name that is no DNS label, a missing URL and a URL with credentials name their fields",
			yaml: "backends:\n- {name: Mimir_1}\n- {name: b, url: 'https://u:secret@mimir/'}\n- {name: c, url: 'ftp://x'}\n",
			want: []string{"backends[0].name: Invalid value", "backends[0].url: Required value", "backends[1].url: Invalid value", "backends[2].url: Invalid value"},
		},
		{
			name: "a header has a file, never an inline value",
			yaml: "backends:\n- {name: m, url: 'http://a', headers: [{name: Authorization, value: secret}]}\n",
			want: []string{"backends[0].headers[0].value: Forbidden: unknown field"},
		},
		{
			name: "a header without a file, a duplicate header, the tenant header and a reserved header name their fields",
			yaml: "backends:\n- {name: m, url: 'http://a', headers: [{name: A}, {name: a, file: /f}, {name: x-scope-orgid, file: /f}, {name: authorization, file: /f}, {name: Host, file: /f}]}\n",
			want: []string{"backends[0].headers[0].file: Required value", `backends[0].headers[1].name: Duplicate value: "a"`,
				"backends[0].headers[2].name: Invalid value", "backends[0].headers[3].name: Invalid value: \"authorization\": set a bearer token with bearerTokenFile",
				"backends[0].headers[4].name: Invalid value"},
		},
		{
			name: "tenantFromNamespace needs a fixed tenant for discovery",
			yaml: "backends:\n- {name: m, url: 'http://a', tenantFromNamespace: true}\n",
			want: []string{"backends[0].tenant: Required value: tenantFromNamespace needs a tenant"},
		},
		{
			name: "resourceRules cannot read a backend whose tenant is the namespace",
			yaml: "backends:\n- {name: m, url: 'http://a', tenant: p, tenantFromNamespace: true}\nresourceRules:\n  cpu: {containerQuery: x, nodeQuery: x, containerLabel: c}\n  memory: {containerQuery: x, nodeQuery: x, containerLabel: c}\n  window: 1m\n  backend: m\n",
			want: []string{`resourceRules.backend: Invalid value: "m": a backend with tenantFromNamespace cannot serve metrics.k8s.io`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkLoadFails(t, tc.yaml, tc.want) })
	}
}
