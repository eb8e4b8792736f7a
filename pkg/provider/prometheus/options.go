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
}

// NewOptions returns Options with their defaults.
func NewOptions() *Options {
	return &Options{
		Timeout: 10 * time.Second,
		Method:  http.MethodPost,
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
		"Extra header for every request to Prometheus, as Name=Value (e.g. X-Scope-OrgID=tenant-a). Repeatable.")
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
	_, headerErrs := parseHeaders(o.Headers)
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

// parseHeaders turns Name=Value pairs into prometheus/common header config, or
// returns an error for every malformed or reserved header.
func parseHeaders(pairs []string) (*commoncfg.Headers, []error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	h := &commoncfg.Headers{Headers: map[string]commoncfg.Header{}}
	var errs []error
	for _, pair := range pairs {
		name, value, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		switch {
		case !ok || name == "":
			errs = append(errs, fmt.Errorf("--prometheus-header %q: want Name=Value", pair))
			continue
		case strings.ContainsAny(name, " \t\r\n:()<>@,;\\\"/[]?={}"):
			errs = append(errs, fmt.Errorf("--prometheus-header %q: invalid header name %q", pair, name))
			continue
		case strings.ContainsAny(value, "\r\n"):
			errs = append(errs, fmt.Errorf("--prometheus-header %q: value contains a line break", name))
			continue
		}
		name = http.CanonicalHeaderKey(name)
		if _, reserved := commoncfg.ReservedHeaders[name]; reserved {
			errs = append(errs, fmt.Errorf("--prometheus-header %q: header %s is reserved", pair, name))
			continue
		}
		hdr := h.Headers[name]
		hdr.Values = append(hdr.Values, value)
		h.Headers[name] = hdr
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return h, nil
}

// Config validates the options and turns them into a Config for New.
func (o *Options) Config() (*Config, error) {
	if errs := o.Validate(); len(errs) > 0 {
		return nil, utilerrors.NewAggregate(errs)
	}
	headers, errs := parseHeaders(o.Headers)
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
		Address: o.URL,
		Timeout: o.Timeout,
		Method:  strings.ToUpper(o.Method),
		HTTP:    hc,
		Clock:   clock.RealClock{},
	}, nil
}
