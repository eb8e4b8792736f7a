package rules

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"

	commoncfg "github.com/prometheus/common/config"
	pmodel "github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultBackend names the backend of --prometheus-url and its --prometheus-* flags: the one a
// rule without a backend field reads. A rule file may not define a backend of that name.
const DefaultBackend = "default"

// tenantHeader is the header that carries a backend's tenant, as Mimir, Cortex, Loki and a
// Thanos receiver read it.
const tenantHeader = "X-Scope-Orgid" // http.CanonicalHeaderKey("X-Scope-OrgID")

// Backend is a PromQL backend besides the default one. Its secrets never sit in the rule file:
// header values are read from files (a mounted Secret) on every request.
type Backend struct {
	// Name is what rules' backend field refers to and the backend label of podpilot's own
	// metrics: a DNS label, not "default".
	Name string `json:"name"`
	// URL is the base URL of its Prometheus HTTP API, path prefix included.
	URL string `json:"url"`
	// Headers are extra request headers whose values are the content of files.
	Headers []HeaderFromFile `json:"headers,omitempty"`
	// BearerTokenFile holds a bearer token for the Authorization header, re-read on every
	// request, as --prometheus-bearer-token-file.
	BearerTokenFile string `json:"bearerTokenFile,omitempty"`
	// Tenant is the X-Scope-OrgID of every call; with TenantFromNamespace, of the calls that
	// have no namespace (series discovery, metrics of cluster-scoped objects).
	Tenant string `json:"tenant,omitempty"`
	// TenantFromNamespace makes the X-Scope-OrgID of every call for a namespace's metrics that
	// namespace's name; it needs Tenant, for discovery.
	TenantFromNamespace bool `json:"tenantFromNamespace,omitempty"`
	// Timeout bounds every call; 0 means --prometheus-timeout.
	Timeout pmodel.Duration `json:"timeout,omitempty"`
	// TLS verifies the server certificate.
	TLS BackendTLS `json:"tls,omitempty"`
}

// HeaderFromFile is a request header whose value is the content of File (white space around it
// trimmed), re-read on every request.
type HeaderFromFile struct {
	// Name is the header's name, e.g. Authorization.
	Name string `json:"name"`
	// File holds the value, e.g. a key of a Secret mounted as a volume.
	File string `json:"file"`
}

// BackendTLS says how a backend's server certificate is verified.
type BackendTLS struct {
	// CAFile holds the CA certificates that verify the server certificate.
	CAFile string `json:"caFile,omitempty"`
	// InsecureSkipVerify disables verification of the server certificate. Insecure.
	InsecureSkipVerify bool `json:"insecureSkipVerify,omitempty"`
}

// backendName is a DNS label: what keeps the backend label of podpilot's metrics short and tame.
var backendName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// validateBackends checks the backends and returns their names, default included.
func validateBackends(backends []Backend, path *field.Path) (map[string]Backend, field.ErrorList) {
	names := map[string]Backend{DefaultBackend: {Name: DefaultBackend}}
	var errs field.ErrorList
	for i, b := range backends {
		p := path.Index(i)
		switch {
		case b.Name == DefaultBackend:
			errs = append(errs, field.Invalid(p.Child("name"), b.Name, "the backend of --prometheus-url is named default; pick another name"))
		case !backendName.MatchString(b.Name):
			errs = append(errs, field.Invalid(p.Child("name"), b.Name, "must be a DNS label: lower-case letters, digits and '-', at most 63"))
		default:
			if _, dup := names[b.Name]; dup {
				errs = append(errs, field.Duplicate(p.Child("name"), b.Name))
			}
			names[b.Name] = b
		}
		errs = append(errs, validateBackend(b, p)...)
	}
	return names, errs
}

func validateBackend(b Backend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateBackendURL(b.URL, p.Child("url"))...)
	seen := map[string]bool{}
	for j, h := range b.Headers {
		hp := p.Child("headers").Index(j)
		name := http.CanonicalHeaderKey(strings.TrimSpace(h.Name))
		switch {
		case name == "" || strings.ContainsAny(name, " \t\r\n:()<>@,;\\\"/[]?={}"):
			errs = append(errs, field.Invalid(hp.Child("name"), h.Name, "must be an HTTP header name"))
		case name == tenantHeader:
			errs = append(errs, field.Invalid(hp.Child("name"), h.Name, "set the tenant with tenant or tenantFromNamespace"))
		case name == "Authorization":
			errs = append(errs, field.Invalid(hp.Child("name"), h.Name, "set a bearer token with bearerTokenFile"))
		case reserved(name):
			errs = append(errs, field.Invalid(hp.Child("name"), h.Name, "a header the HTTP client sets itself"))
		case seen[name]:
			errs = append(errs, field.Duplicate(hp.Child("name"), h.Name))
		}
		seen[name] = true
		if h.File == "" {
			errs = append(errs, field.Required(hp.Child("file"), "a file holding the value (never the value itself)"))
		}
	}
	if strings.ContainsAny(b.Tenant, "\r\n|") {
		errs = append(errs, field.Invalid(p.Child("tenant"), b.Tenant, "must be one tenant, without line breaks or '|'"))
	}
	if b.TenantFromNamespace && b.Tenant == "" {
		errs = append(errs, field.Required(p.Child("tenant"),
			"tenantFromNamespace needs a tenant for the calls that have no namespace: series discovery and metrics of cluster-scoped objects"))
	}
	if b.Timeout < 0 {
		errs = append(errs, field.Invalid(p.Child("timeout"), b.Timeout.String(), "must not be negative"))
	}
	return errs
}

// reserved reports whether the HTTP client refuses to set the header name (canonical) itself.
func reserved(name string) bool {
	_, ok := commoncfg.ReservedHeaders[name]
	return ok
}

func validateBackendURL(raw string, p *field.Path) field.ErrorList {
	if raw == "" {
		return field.ErrorList{field.Required(p, "the base URL of the backend's Prometheus HTTP API")}
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return field.ErrorList{field.Invalid(p, raw, err.Error())}
	case u.User != nil:
		return field.ErrorList{field.Invalid(p, u.Redacted(), "no credentials in the URL: use headers from files")}
	case u.Scheme != "http" && u.Scheme != "https":
		return field.ErrorList{field.Invalid(p, raw, "scheme must be http or https")}
	case u.Host == "":
		return field.ErrorList{field.Invalid(p, raw, "host is missing")}
	}
	return nil
}

// validateBackendRef checks that a rule's backend field names a backend.
func validateBackendRef(name string, backends map[string]Backend, p *field.Path) field.ErrorList {
	if name == "" {
		return nil
	}
	if _, ok := backends[name]; !ok {
		return field.ErrorList{field.Invalid(p, name, "unknown backend: neither default nor the name of an entry of backends")}
	}
	return nil
}

// backendOf is the backend a rule's backend field names: DefaultBackend when empty.
func backendOf(name string) string {
	if name == "" {
		return DefaultBackend
	}
	return name
}
