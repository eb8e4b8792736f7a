package prometheus

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/clock"
)

// Options are the command-line options of the Prometheus client.
type Options struct {
	// URL is the base URL of the Prometheus HTTP API. It may carry a path
	// prefix, e.g. http://thanos:9090/tenant-a/.
	URL string
	// Timeout bounds every call to Prometheus.
	Timeout time.Duration
	// Method is the HTTP method of queries and series lookups: GET or POST.
	Method string

	// CAFile verifies the server certificate.
	CAFile string
	// ClientCert and ClientKey are the client certificate and key for mutual TLS.
	ClientCert string
	// ClientKey is the private key of ClientCert.
	ClientKey string
	// InsecureSkipVerify disables verification of the server certificate.
	InsecureSkipVerify bool

	// BearerTokenFile holds a bearer token, re-read on every request.
	BearerTokenFile string
	// BasicAuthUsername is the user name for HTTP basic auth.
	BasicAuthUsername string
	// BasicAuthPasswordFile holds the basic auth password, re-read on every request.
	BasicAuthPasswordFile string

	// Headers are extra request headers, each "Name=Value".
	Headers []string
	// HeaderFiles are extra request headers whose values are read from files, each
	// "Name=/path/to/file", re-read on every request.
	HeaderFiles []string

	// WarningsAsErrors makes an answer that carries warnings a failed call.
	WarningsAsErrors bool
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		Timeout:          10 * time.Second,
		Method:           http.MethodPost,
		WarningsAsErrors: true,
	}
}

// AddFlags adds the --prometheus-* flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.URL, "prometheus-url", o.URL,
		"URL of the Prometheus HTTP API, including any path prefix (e.g. http://thanos:9090/tenant-a/).")
	fs.DurationVar(&o.Timeout, "prometheus-timeout", o.Timeout,
		"Timeout of every call to Prometheus, queries and series discovery alike.")
	fs.StringVar(&o.Method, "prometheus-method", o.Method,
		"HTTP method for queries and series lookups: GET or POST. POST keeps long queries clear of URL length limits.")
	fs.StringVar(&o.CAFile, "prometheus-ca-file", o.CAFile,
		"File with the CA certificates that verify the Prometheus server certificate.")
	fs.StringVar(&o.ClientCert, "prometheus-client-cert", o.ClientCert,
		"Client certificate file for mutual TLS with Prometheus; needs --prometheus-client-key.")
	fs.StringVar(&o.ClientKey, "prometheus-client-key", o.ClientKey,
		"Client key file for mutual TLS with Prometheus; needs --prometheus-client-cert.")
	fs.BoolVar(&o.InsecureSkipVerify, "prometheus-insecure-skip-verify", o.InsecureSkipVerify,
		"Do not verify the Prometheus server certificate. Insecure.")
	fs.StringVar(&o.BearerTokenFile, "prometheus-bearer-token-file", o.BearerTokenFile,
		"File with a bearer token for Prometheus, re-read on every request so that rotated tokens are picked up.")
	fs.StringVar(&o.BasicAuthUsername, "prometheus-basic-auth-username", o.BasicAuthUsername,
		"User name for HTTP basic auth to Prometheus; needs --prometheus-basic-auth-password-file.")
	fs.StringVar(&o.BasicAuthPasswordFile, "prometheus-basic-auth-password-file", o.BasicAuthPasswordFile,
		"File with the password for HTTP basic auth to Prometheus, re-read on every request.")
	fs.StringArrayVar(&o.Headers, "prometheus-header", o.Headers,
		"Extra header for every request to Prometheus, as Name=Value (e.g. X-Scope-OrgID=tenant-a). Repeatable. "+
			"For a secret value use --prometheus-header-file, which keeps it out of the process arguments.")
	fs.StringArrayVar(&o.HeaderFiles, "prometheus-header-file", o.HeaderFiles,
		"Extra header for every request to Prometheus whose value is the content of a file (white space around it trimmed), "+
			"as Name=/path/to/file, e.g. a mounted Secret; re-read on every request, like --prometheus-bearer-token-file. Repeatable.")
	fs.BoolVar(&o.WarningsAsErrors, "prometheus-warnings-as-errors", o.WarningsAsErrors,
		"Treat a Prometheus answer that carries warnings as a failed call: the metrics APIs answer 503, the autoscaler "+
			"holds replicas and discovery keeps its last good series. Warnings mark answers that may be partial (a Thanos "+
			"store or a remote-read endpoint that failed, a limit hit); partial_response=false is sent either way. Turn off "+
			"only if your queries draw warnings on complete answers; every such answer is counted in "+
			"podpilot_prometheus_client_answers_with_warnings_total.")
}

// Validate returns every problem with the options.
func (o *Options) Validate() []error {
	var errs []error
	errs = append(errs, o.validateURL()...)
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--prometheus-timeout must be positive, got %s", o.Timeout))
	}
	if m := strings.ToUpper(o.Method); m != http.MethodGet && m != http.MethodPost {
		errs = append(errs, fmt.Errorf("--prometheus-method must be GET or POST, got %q", o.Method))
	}
	if (o.ClientCert == "") != (o.ClientKey == "") {
		errs = append(errs, errors.New("--prometheus-client-cert and --prometheus-client-key must be set together"))
	}
	if (o.BasicAuthUsername == "") != (o.BasicAuthPasswordFile == "") {
		errs = append(errs, errors.New("--prometheus-basic-auth-username and --prometheus-basic-auth-password-file must be set together"))
	}
	if o.BearerTokenFile != "" && (o.BasicAuthUsername != "" || o.BasicAuthPasswordFile != "") {
		errs = append(errs, errors.New("--prometheus-bearer-token-file and --prometheus-basic-auth-* are mutually exclusive"))
	}
	for _, f := range []struct{ flag, file string }{
		{"--prometheus-ca-file", o.CAFile},
		{"--prometheus-client-cert", o.ClientCert},
		{"--prometheus-client-key", o.ClientKey},
		{"--prometheus-bearer-token-file", o.BearerTokenFile},
		{"--prometheus-basic-auth-password-file", o.BasicAuthPasswordFile},
	} {
		if f.file == "" {
			continue
		}
		if _, err := os.Stat(f.file); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	_, headerErrs := parseHeaders(o.Headers, o.HeaderFiles)
	return append(errs, headerErrs...)
}

func (o *Options) validateURL() []error {
	if o.URL == "" {
		return []error{errors.New("--prometheus-url is required")}
	}
	u, err := url.Parse(o.URL)
	if err != nil {
		return []error{fmt.Errorf("--prometheus-url: %w", err)}
	}
	var errs []error
	if u.Scheme != "http" && u.Scheme != "https" {
		errs = append(errs, fmt.Errorf("--prometheus-url %q: scheme must be http or https", o.URL))
	}
	if u.Host == "" {
		errs = append(errs, fmt.Errorf("--prometheus-url %q: host is missing", o.URL))
	}
	if u.User != nil {
		errs = append(errs, fmt.Errorf("--prometheus-url %q: use --prometheus-basic-auth-* instead of credentials in the URL", u.Redacted()))
	}
	return errs
}

// parseHeaders turns Name=Value pairs and Name=/path/to/file pairs into prometheus/common
// header config, or returns an error for every malformed or reserved header and every header
// file that cannot be read.
func parseHeaders(pairs, filePairs []string) (*commoncfg.Headers, []error) {
	if len(pairs)+len(filePairs) == 0 {
		return nil, nil
	}
	h := &commoncfg.Headers{Headers: map[string]commoncfg.Header{}}
	var errs []error
	for _, f := range []struct {
		flag  string
		pairs []string
		add   func(*commoncfg.Header, string) error
	}{
		{flag: "--prometheus-header", pairs: pairs, add: addHeaderValue},
		{flag: "--prometheus-header-file", pairs: filePairs, add: addHeaderFile},
	} {
		for _, pair := range f.pairs {
			name, err := headerName(pair)
			if err == nil {
				hdr := h.Headers[name]
				_, value, _ := strings.Cut(pair, "=")
				err = f.add(&hdr, value)
				h.Headers[name] = hdr
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %q: %w", f.flag, headerSubject(pair), err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return h, nil
}

// headerName returns the canonical name of a Name=... pair, or why it is not a header podpilot
// may set.
func headerName(pair string) (string, error) {
	name, _, ok := strings.Cut(pair, "=")
	name = strings.TrimSpace(name)
	switch {
	case !ok || name == "":
		return "", errors.New("want Name=Value")
	case strings.ContainsAny(name, " \t\r\n:()<>@,;\\\"/[]?={}"):
		return "", fmt.Errorf("invalid header name %q", name)
	}
	name = http.CanonicalHeaderKey(name)
	if _, reserved := commoncfg.ReservedHeaders[name]; reserved {
		return "", fmt.Errorf("header %s is reserved", name)
	}
	return name, nil
}

// headerSubject is what an error repeats of a pair: its name only, never a value that may be a
// secret.
func headerSubject(pair string) string {
	name, _, _ := strings.Cut(pair, "=")
	return strings.TrimSpace(name)
}

func addHeaderValue(h *commoncfg.Header, value string) error {
	if strings.ContainsAny(value, "\r\n") {
		return errors.New("value contains a line break")
	}
	h.Values = append(h.Values, value)
	return nil
}

// addHeaderFile adds a header read from path on every request; the file must be readable now
// and hold one line (prometheus/common trims the white space around it).
func addHeaderFile(h *commoncfg.Header, path string) error {
	if path == "" {
		return errors.New("want Name=/path/to/file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if strings.ContainsAny(strings.TrimSpace(string(b)), "\r\n") {
		return fmt.Errorf("file %s holds a line break inside the value", path)
	}
	h.Files = append(h.Files, path)
	return nil
}

// Config validates the options and turns them into a Config for New.
func (o *Options) Config() (*Config, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	headers, errs := parseHeaders(o.Headers, o.HeaderFiles)
	if len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	hc := commoncfg.DefaultHTTPClientConfig
	hc.TLSConfig = commoncfg.TLSConfig{
		CAFile:             o.CAFile,
		CertFile:           o.ClientCert,
		KeyFile:            o.ClientKey,
		InsecureSkipVerify: o.InsecureSkipVerify,
	}
	if o.BearerTokenFile != "" {
		hc.Authorization = &commoncfg.Authorization{Type: "Bearer", CredentialsFile: o.BearerTokenFile}
	}
	if o.BasicAuthUsername != "" {
		hc.BasicAuth = &commoncfg.BasicAuth{Username: o.BasicAuthUsername, PasswordFile: o.BasicAuthPasswordFile}
	}
	hc.HTTPHeaders = headers
	if err := hc.Validate(); err != nil {
		return nil, fmt.Errorf("prometheus http client config: %w", err)
	}
	return &Config{
		Address:          o.URL,
		Timeout:          o.Timeout,
		Method:           strings.ToUpper(o.Method),
		HTTP:             hc,
		WarningsAsErrors: o.WarningsAsErrors,
		Clock:            clock.RealClock{},
	}, nil
}

// Endpoint is a backend besides the default one, as a rule file describes it: what differs
// from the default backend's Config.
type Endpoint struct {
	// Name names the backend in errors and metrics.
	Name string
	// URL is the base URL of its Prometheus HTTP API, path prefix included.
	URL string
	// HeaderFiles are extra headers, name to the file holding the value, re-read on every
	// request.
	HeaderFiles map[string]string
	// BearerTokenFile holds a bearer token, re-read on every request.
	BearerTokenFile string
	// Timeout bounds every call; 0 keeps the default backend's.
	Timeout time.Duration
	// CAFile verifies the server certificate.
	CAFile string
	// InsecureSkipVerify disables verification of the server certificate.
	InsecureSkipVerify bool
}

// ForEndpoint returns the Config of the backend e: c's method, warnings policy and clock, e's
// URL, TLS, bearer token, headers and timeout (c's when e has none). None of c's credentials (bearer token,
// basic auth, client certificate, headers) goes to e. Header files must be readable now.
func (c *Config) ForEndpoint(e Endpoint) (*Config, error) {
	hc := commoncfg.DefaultHTTPClientConfig
	hc.TLSConfig = commoncfg.TLSConfig{CAFile: e.CAFile, InsecureSkipVerify: e.InsecureSkipVerify}
	if len(e.HeaderFiles) > 0 {
		hc.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{}}
		for name, file := range e.HeaderFiles {
			var h commoncfg.Header
			if err := addHeaderFile(&h, file); err != nil {
				return nil, fmt.Errorf("backend %s: header %s: %w", e.Name, name, err)
			}
			hc.HTTPHeaders.Headers[http.CanonicalHeaderKey(name)] = h
		}
	}
	if e.BearerTokenFile != "" {
		hc.Authorization = &commoncfg.Authorization{Type: "Bearer", CredentialsFile: e.BearerTokenFile}
	}
	if err := hc.Validate(); err != nil {
		return nil, fmt.Errorf("backend %s: http client config: %w", e.Name, err)
	}
	out := *c
	out.Backend, out.Address, out.HTTP = e.Name, e.URL, hc
	if e.Timeout > 0 {
		out.Timeout = e.Timeout
	}
	return &out, nil
}
