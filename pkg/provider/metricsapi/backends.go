package metricsapi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// BackendFactory builds the client of a rule file's backend; cmd derives it from the default
// backend's prometheus.Config (prometheus.Config.ForEndpoint).
type BackendFactory func(prometheus.Endpoint) (prometheus.TenantClient, error)

// backend is one PromQL backend of the rules in force: its client and how a call picks its
// tenant. It is immutable.
type backend struct {
	name string
	// client serves calls without a tenant: the default backend, or one without tenant.
	client prometheus.Client
	// tenants is set when the backend has a tenant.
	tenants prometheus.TenantClient
	// tenant is the X-Scope-OrgID of every call, or with fromNamespace of the calls without a
	// namespace (discovery, metrics of cluster-scoped objects).
	tenant        string
	fromNamespace bool
}

// forNamespace returns the client of a call for namespace's metrics ("": a call without a
// namespace) and the tenant it carries ("": none). With tenantFromNamespace the tenant of a
// namespace's call is that namespace, and only that one.
func (b *backend) forNamespace(namespace string) (prometheus.Client, string) {
	switch {
	case b.tenants == nil:
		return b.client, ""
	case b.fromNamespace && namespace != "":
		return b.tenants.WithTenant(namespace), namespace
	default:
		return b.tenants.WithTenant(b.tenant), b.tenant
	}
}

// shareKey is the key under which answers to q read from this backend with tenant (as
// forNamespace returns it) are shared: the backend and the tenant are part of it, so an answer
// read with one tenant never serves another, and every distinct (backend, tenant, query) still
// costs one call.
func (b *backend) shareKey(tenant, q string) string {
	return b.name + "\x00" + tenant + "\x00" + q
}

// backends are the backends of a rule set by name, DefaultBackend included.
type backends map[string]*backend

// buildBackends returns the default backend (def, the --prometheus-url client) and one per
// backend of set, built by factory. Every file a backend reads (header values, bearer token,
// CA) must be readable now; each error names its field, e.g. backends[0].headers[1].file.
func buildBackends(def prometheus.Client, set *rules.RuleSet, factory BackendFactory) (backends, error) {
	out := backends{rules.DefaultBackend: {name: rules.DefaultBackend, client: def}}
	var errs field.ErrorList
	for i, b := range set.Backends {
		p := field.NewPath("backends").Index(i)
		if fileErrs := backendFileErrors(b, p); len(fileErrs) > 0 {
			errs = append(errs, fileErrs...)
			continue
		}
		if factory == nil {
			errs = append(errs, field.Forbidden(p, "this podpilot has no backend factory: only the default backend"))
			continue
		}
		e := prometheus.Endpoint{Name: b.Name, URL: b.URL, Timeout: time.Duration(b.Timeout), BearerTokenFile: b.BearerTokenFile,
			CAFile: b.TLS.CAFile, InsecureSkipVerify: b.TLS.InsecureSkipVerify, HeaderFiles: map[string]string{}}
		for _, h := range b.Headers {
			e.HeaderFiles[h.Name] = h.File
		}
		c, err := factory(e)
		if err != nil {
			errs = append(errs, field.Invalid(p, b.Name, err.Error()))
			continue
		}
		be := &backend{name: b.Name, client: c, tenant: b.Tenant, fromNamespace: b.TenantFromNamespace}
		if b.Tenant != "" || b.TenantFromNamespace {
			be.tenants = c
		}
		out[b.Name] = be
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("build backends: %w", errs.ToAggregate())
	}
	return out, nil
}

// backendFileErrors names every file of b that cannot be read.
func backendFileErrors(b rules.Backend, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	check := func(fp *field.Path, file string) {
		if file == "" {
			return
		}
		if _, err := os.ReadFile(file); err != nil {
			errs = append(errs, field.Invalid(fp, file, err.Error()))
		}
	}
	for j, h := range b.Headers {
		check(p.Child("headers").Index(j).Child("file"), h.File)
	}
	check(p.Child("bearerTokenFile"), b.BearerTokenFile)
	check(p.Child("tls", "caFile"), b.TLS.CAFile)
	return errs
}

// resourceState is the resource-metric rules in force and the backend they read.
type resourceState struct {
	queries *rules.ResourceQueries
	backend *backend
}

// errNoResourceRules is what the resource client answers while the rules have no resourceRules.
var errNoResourceRules = errors.New("the rule file has no resourceRules")

// ResourceClient returns a prometheus.Client for metrics.k8s.io: each call goes to the backend
// of the resourceRules in force (reloads included), without a tenant per namespace (the rule
// file refuses resourceRules on such a backend).
func (p *Provider) ResourceClient() prometheus.Client { return resourceClient{p: p} }

type resourceClient struct{ p *Provider }

var _ prometheus.Client = resourceClient{}

func (c resourceClient) client() (prometheus.Client, error) {
	st := c.p.resource.Load()
	if st == nil || st.backend == nil {
		return nil, fmt.Errorf("%w: %w", prometheus.ErrUnavailable, errNoResourceRules)
	}
	client, _ := st.backend.forNamespace("")
	return client, nil
}

// Query implements prometheus.Client.
func (c resourceClient) Query(ctx context.Context, q string, at time.Time) (model.Vector, error) {
	client, err := c.client()
	if err != nil {
		return nil, err
	}
	return client.Query(ctx, q, at)
}

// QueryLabels implements prometheus.Client.
func (c resourceClient) QueryLabels(ctx context.Context, q string, at time.Time, labels []string) ([]prometheus.Sample, error) {
	client, err := c.client()
	if err != nil {
		return nil, err
	}
	return client.QueryLabels(ctx, q, at, labels)
}

// Series implements prometheus.Client.
func (c resourceClient) Series(ctx context.Context, matchers []string, start, end time.Time) ([]model.LabelSet, error) {
	client, err := c.client()
	if err != nil {
		return nil, err
	}
	return client.Series(ctx, matchers, start, end)
}

// QueryRange implements prometheus.Client.
func (c resourceClient) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	client, err := c.client()
	if err != nil {
		return nil, err
	}
	return client.QueryRange(ctx, q, start, end, step)
}
