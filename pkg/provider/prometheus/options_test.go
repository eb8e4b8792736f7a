package prometheus

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	commoncfg "github.com/prometheus/common/config"
	"github.com/spf13/pflag"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want *Options
	}{{
		name: "defaults are a 10s timeout, POST and warnings as errors",
		want: &Options{Timeout: 10 * time.Second, Method: http.MethodPost, WarningsAsErrors: true},
	}, {
		name: "every flag is parsed and --prometheus-header repeats, keeping commas",
		args: []string{
			"--prometheus-url=http://thanos:9090/tenant-a/",
			"--prometheus-timeout=3s",
			"--prometheus-method=GET",
			"--prometheus-ca-file=ca.pem",
			"--prometheus-client-cert=c.pem",
			"--prometheus-client-key=k.pem",
			"--prometheus-insecure-skip-verify",
			"--prometheus-bearer-token-file=token",
			"--prometheus-basic-auth-username=u",
			"--prometheus-basic-auth-password-file=pw",
			"--prometheus-header=X-Scope-OrgID=tenant-a|tenant-b",
			"--prometheus-header=X-Extra=a,b",
			"--prometheus-header-file=X-Scope-OrgID=/var/run/secrets/tenant",
			"--prometheus-header-file=X-Token=/a,b",
			"--prometheus-warnings-as-errors=false",
		},
		want: &Options{
			URL:                   "http://thanos:9090/tenant-a/",
			Timeout:               3 * time.Second,
			Method:                "GET",
			CAFile:                "ca.pem",
			ClientCert:            "c.pem",
			ClientKey:             "k.pem",
			InsecureSkipVerify:    true,
			BearerTokenFile:       "token",
			BasicAuthUsername:     "u",
			BasicAuthPasswordFile: "pw",
			Headers:               []string{"X-Scope-OrgID=tenant-a|tenant-b", "X-Extra=a,b"},
			HeaderFiles:           []string{"X-Scope-OrgID=/var/run/secrets/tenant", "X-Token=/a,b"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := NewOptions()
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if diff := cmp.Diff(tc.want, o); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	twoLines := filepath.Join(dir, "two-lines")
	if err := os.WriteFile(twoLines, []byte("a\nb\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		modify func(*Options)
		want   []string // substrings, one per expected error, in order
	}{{
		name:   "a plain URL is valid",
		modify: func(*Options) {},
	}, {
		name:   "the URL is required",
		modify: func(o *Options) { o.URL = "" },
		want:   []string{"--prometheus-url is required"},
	}, {
		name:   "the URL needs an http(s) scheme and a host",
		modify: func(o *Options) { o.URL = "thanos:9090/tenant-a" },
		want:   []string{"scheme must be http or https", "host is missing"},
	}, {
		name:   "a URL that does not parse is reported",
		modify: func(o *Options) { o.URL = "http://thanos:port/" },
		want:   []string{"--prometheus-url: parse"},
	}, {
		name:   "credentials in the URL are refused without echoing the password",
		modify: func(o *Options) { o.URL = "http://u:secret@thanos/" },
		want:   []string{"u:xxxxx@thanos"},
	}, {
		name:   "the method is GET or POST in any case",
		modify: func(o *Options) { o.Method = "get" },
	}, {
		name: "every problem is reported at once",
		modify: func(o *Options) {
			o.URL = "ftp://thanos"
			o.Timeout = 0
			o.Method = "PUT"
			o.ClientCert = file
			o.BearerTokenFile = missing
			o.BasicAuthUsername = "u"
			o.Headers = []string{"X-Scope-OrgID", "=v", "Bad Name=v", "Authorization=Bearer x", "X-Ok=1"}
			o.HeaderFiles = []string{"X-Token=" + missing, "X-Empty=", "Authorization=" + file, "X-Lines=" + twoLines, "X-Ok=" + file}
		},
		want: []string{
			"scheme must be http or https",
			"--prometheus-timeout must be positive",
			`--prometheus-method must be GET or POST, got "PUT"`,
			"--prometheus-client-cert and --prometheus-client-key must be set together",
			"--prometheus-basic-auth-username and --prometheus-basic-auth-password-file must be set together",
			"--prometheus-bearer-token-file and --prometheus-basic-auth-* are mutually exclusive",
			"--prometheus-bearer-token-file: stat " + missing,
			`--prometheus-header "X-Scope-OrgID": want Name=Value`,
			`--prometheus-header "": want Name=Value`,
			`--prometheus-header "Bad Name": invalid header name "Bad Name"`,
			`--prometheus-header "Authorization": header Authorization is reserved`,
			`--prometheus-header-file "X-Token": open ` + missing,
			`--prometheus-header-file "X-Empty": want Name=/path/to/file`,
			`--prometheus-header-file "Authorization": header Authorization is reserved`,
			`--prometheus-header-file "X-Lines": file ` + twoLines + ` holds a line break inside the value`,
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := optionsFor("http://thanos:9090/tenant-a/")
			tc.modify(o)
			errs := o.Validate()
			if len(errs) != len(tc.want) {
				t.Fatalf("Validate() = %d errors %v, want %d", len(errs), errs, len(tc.want))
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tc.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, err, tc.want[i])
				}
			}
		})
	}
}

func TestConfigBuildsThePrometheusHTTPClientConfig(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("t"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := optionsFor("https://thanos:9090/tenant-a/")
	o.Method = "get"
	o.InsecureSkipVerify = true
	o.BearerTokenFile = token
	o.Headers = []string{"x-scope-orgid=tenant-a", "X-Scope-OrgID=tenant-b"}
	o.HeaderFiles = []string{"X-Scope-OrgID=" + token}
	cfg, err := o.Config()
	if err != nil {
		t.Fatalf("Config() = %v", err)
	}
	want := commoncfg.DefaultHTTPClientConfig
	want.TLSConfig = commoncfg.TLSConfig{InsecureSkipVerify: true}
	want.Authorization = &commoncfg.Authorization{Type: "Bearer", CredentialsFile: token}
	want.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{
		"X-Scope-Orgid": {Values: []string{"tenant-a", "tenant-b"}, Files: []string{token}},
	}}
	if diff := cmp.Diff(want, cfg.HTTP, cmpopts.IgnoreUnexported(commoncfg.ProxyConfig{})); diff != "" {
		t.Errorf("HTTP config (-want +got):\n%s", diff)
	}
	if cfg.Method != http.MethodGet || cfg.Address != o.URL || cfg.Timeout != o.Timeout || !cfg.WarningsAsErrors {
		t.Errorf("Config() = method %q, address %q, timeout %s", cfg.Method, cfg.Address, cfg.Timeout)
	}
}

func TestConfigRefusesInvalidOptions(t *testing.T) {
	o := optionsFor("")
	o.Method = "PUT"
	_, err := o.Config()
	if err == nil || !strings.Contains(err.Error(), "--prometheus-url is required") || !strings.Contains(err.Error(), "--prometheus-method") {
		t.Errorf("Config() = %v, want both problems", err)
	}
}
