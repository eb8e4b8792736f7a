package forward

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DefaultTimeout bounds one forwarded request, and one fetch of the other adapter's metric list.
const DefaultTimeout = 5 * time.Second

// Options are the command-line options of external-metrics forwarding. Forwarding is on when
// Service or URL is set.
type Options struct {
	// Service is the other adapter's Service as namespace/name:port (the Service port, like an
	// APIService's service.port); podpilot connects to its cluster IP.
	Service string
	// URL overrides Service with an explicit https://host:port, e.g. where cluster IPs are not
	// routable (a control plane without kube-proxy).
	URL string
	// CAFile holds the PEM CA bundle that verifies the other adapter's serving certificate.
	CAFile string
	// Timeout bounds each forwarded request and each fetch of the other adapter's metric list.
	Timeout time.Duration
}

// NewOptions returns Options with their defaults: forwarding off.
func NewOptions() *Options {
	return &Options{Timeout: DefaultTimeout}
}

// AddFlags adds the --external-metrics-forward* flags to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Service, "external-metrics-forward", o.Service,
		"Another external-metrics adapter's Service, as namespace/name:port, that serves the external metrics no podpilot rule serves "+
			"(e.g. keda/keda-operator-metrics-apiserver:443). podpilot authorizes the caller as the aggregator would, then forwards "+
			"the request with its own identity over TLS verified with --external-metrics-forward-ca-file. Empty: no forwarding.")
	fs.StringVar(&o.URL, "external-metrics-forward-url", o.URL,
		"https://host:port of the other external-metrics adapter, instead of --external-metrics-forward's Service cluster IP "+
			"(for clusters where cluster IPs are not routable from podpilot). The certificate must be valid for host.")
	fs.StringVar(&o.CAFile, "external-metrics-forward-ca-file", o.CAFile,
		"PEM CA bundle verifying the other external-metrics adapter's serving certificate (e.g. its APIService's caBundle, "+
			"mounted from a Secret). Required when forwarding.")
	fs.DurationVar(&o.Timeout, "external-metrics-forward-timeout", o.Timeout,
		"Timeout of each forwarded request and of each fetch of the other adapter's metric list; podpilot's own metrics never wait on it.")
}

// Enabled reports whether forwarding is on.
func (o *Options) Enabled() bool { return o.Service != "" || o.URL != "" }

// Validate returns every problem with the options.
func (o *Options) Validate() []error {
	if !o.Enabled() {
		return nil
	}
	var errs []error
	if o.Service != "" && o.URL != "" {
		errs = append(errs, errors.New("--external-metrics-forward and --external-metrics-forward-url are mutually exclusive"))
	}
	if o.Service != "" {
		if _, err := ParseService(o.Service); err != nil {
			errs = append(errs, err)
		}
	}
	if o.URL != "" {
		if u, err := url.Parse(o.URL); err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") {
			errs = append(errs, fmt.Errorf("--external-metrics-forward-url %q: want https://host:port", o.URL))
		}
	}
	if o.CAFile == "" {
		errs = append(errs, errors.New("--external-metrics-forward-ca-file is required when forwarding external metrics"))
	} else if _, err := os.Stat(o.CAFile); err != nil {
		errs = append(errs, fmt.Errorf("--external-metrics-forward-ca-file: %w", err))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--external-metrics-forward-timeout must be positive, got %s", o.Timeout))
	}
	return errs
}

// Service names the other adapter's Service and port.
type Service struct {
	Namespace, Name string
	Port            int32
}

// ServerName is the name its serving certificate must carry, as the aggregator verifies it:
// name.namespace.svc.
func (s Service) ServerName() string { return s.Name + "." + s.Namespace + ".svc" }

// ParseService parses namespace/name:port.
func ParseService(s string) (Service, error) {
	bad := fmt.Errorf("--external-metrics-forward %q: want namespace/name:port", s)
	ns, rest, ok := strings.Cut(s, "/")
	if !ok || ns == "" {
		return Service{}, bad
	}
	name, port, err := net.SplitHostPort(rest)
	if err != nil || name == "" {
		return Service{}, bad
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return Service{}, bad
	}
	return Service{Namespace: ns, Name: name, Port: int32(p)}, nil
}
