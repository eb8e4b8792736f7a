package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
)

// The API groups podpilot serves, and the versions of each that an install registers as
// APIServices (named <version>.<group>).
const (
	customMetricsGroup   = "custom.metrics.k8s.io"
	externalMetricsGroup = "external.metrics.k8s.io"
	resourceMetricsGroup = "metrics.k8s.io"
)

// apiServiceVersions are the registered versions of each group podpilot serves.
var apiServiceVersions = map[string][]string{
	customMetricsGroup:   {"v1beta2", "v1beta1"},
	externalMetricsGroup: {"v1beta1"},
	resourceMetricsGroup: {"v1beta1"},
}

// apiServicesResource is the aggregation layer's APIService resource.
var apiServicesResource = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}

// apiServiceCheckPeriod is how often the APIServices are read again after the check at start.
const apiServiceCheckPeriod = time.Minute

// APIServiceOptions says which APIServices podpilot's install registers for it, so that
// podpilot can report one that points at another Service. podpilot never writes APIServices.
type APIServiceOptions struct {
	// Owner is podpilot's own Service as namespace/name; empty turns the check off.
	Owner string
	// SkipGroups are the groups whose APIServices the install leaves to another adapter
	// (custom.metrics.k8s.io, external.metrics.k8s.io): they are not checked.
	SkipGroups []string
}

// NewAPIServiceOptions returns the defaults: the check off.
func NewAPIServiceOptions() *APIServiceOptions {
	return &APIServiceOptions{}
}

// AddFlags adds the APIService check's flags to fs.
func (o *APIServiceOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Owner, "apiservice-owner", o.Owner, "podpilot's own Service as <namespace>/<name>. "+
		"At start and every minute podpilot reads the APIServices of custom.metrics.k8s.io and external.metrics.k8s.io "+
		"(less --apiservice-skip-groups; and metrics.k8s.io when the rule file has resourceRules) and logs an error for "+
		"each that points at another Service (podpilot_apiservice_conflict{group}). It never writes them. Empty: no check.")
	fs.StringSliceVar(&o.SkipGroups, "apiservice-skip-groups", o.SkipGroups, "API groups whose APIServices "+
		"this install leaves to another adapter (custom.metrics.k8s.io, external.metrics.k8s.io), so not checked; "+
		"repeated flags add up.")
}

// Validate returns every problem with the options.
func (o *APIServiceOptions) Validate() []error {
	var errs []error
	if o.Owner != "" {
		if _, err := o.owner(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, g := range o.SkipGroups {
		if g != customMetricsGroup && g != externalMetricsGroup {
			errs = append(errs, fmt.Errorf("--apiservice-skip-groups: %q is not one of custom.metrics.k8s.io, external.metrics.k8s.io", g))
		}
	}
	return errs
}

// owner parses Owner.
func (o *APIServiceOptions) owner() (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(o.Owner, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, fmt.Errorf("--apiservice-owner %q: want <namespace>/<service>", o.Owner)
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// apiServiceConflict is an APIService of a group podpilot's install registers that points at
// another Service than podpilot's.
type apiServiceConflict struct {
	// APIService is the object's name, e.g. v1beta1.external.metrics.k8s.io.
	APIService string
	// Group is its API group.
	Group string
	// Service is where it points, namespace/name, or "the kube-apiserver (local)" without one.
	Service string
}

// apiServiceChecker reads the APIServices of the groups podpilot's install registers and
// reports those that point at another Service. It only reads: podpilot never writes them.
type apiServiceChecker struct {
	client    dynamic.ResourceInterface
	owner     types.NamespacedName
	groups    []string
	conflicts *metrics.GaugeVec
}

// newAPIServiceChecker returns the checker of groups for owner, with its gauge
// podpilot_apiservice_conflict{group} registered in r.
func newAPIServiceChecker(client dynamic.Interface, owner types.NamespacedName, groups []string, r metrics.KubeRegistry) (*apiServiceChecker, error) {
	g := metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace: "podpilot",
		Name:      "apiservice_conflict",
		Help: "1 when an APIService of a group this install registers for podpilot points " +
			"at another Service than --apiservice-owner, by group; 0 when it points at podpilot or is absent.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"group"})
	if err := r.Register(g); err != nil {
		return nil, fmt.Errorf("register podpilot_apiservice_conflict: %w", err)
	}
	return &apiServiceChecker{client: client.Resource(apiServicesResource), owner: owner, groups: groups, conflicts: g}, nil
}

// check reads the APIServices of every group and returns those that point at another
// Service, and the groups it could not read. Absent APIServices are no conflict.
func (c *apiServiceChecker) check(ctx context.Context) ([]apiServiceConflict, error) {
	var conflicts []apiServiceConflict
	var errs []error
	for _, group := range c.groups {
		for _, version := range apiServiceVersions[group] {
			name := version + "." + group
			obj, err := c.client.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("get APIService %s: %w", name, err))
				continue
			}
			if svc, ok := c.pointsElsewhere(obj); ok {
				conflicts = append(conflicts, apiServiceConflict{APIService: name, Group: group, Service: svc})
			}
		}
	}
	if len(errs) > 0 {
		return conflicts, fmt.Errorf("read APIServices: %w", errors.Join(errs...))
	}
	return conflicts, nil
}

// pointsElsewhere returns where obj points, and whether that is not podpilot's Service.
func (c *apiServiceChecker) pointsElsewhere(obj *unstructured.Unstructured) (string, bool) {
	svc, found, _ := unstructured.NestedMap(obj.Object, "spec", "service")
	if !found || svc == nil {
		return "the kube-apiserver (local)", true
	}
	ns, _, _ := unstructured.NestedString(svc, "namespace")
	name, _, _ := unstructured.NestedString(svc, "name")
	at := types.NamespacedName{Namespace: ns, Name: name}
	return at.String(), at != c.owner
}

// update checks once, sets the gauge for every group read, and logs each conflict.
func (c *apiServiceChecker) update(ctx context.Context) {
	logger := klog.FromContext(ctx)
	conflicts, err := c.check(ctx)
	if err != nil {
		logger.Error(err, "Cannot check the APIServices of podpilot's API groups")
		return
	}
	for _, group := range c.groups {
		v := 0.0
		if slices.ContainsFunc(conflicts, func(x apiServiceConflict) bool { return x.Group == group }) {
			v = 1
		}
		c.conflicts.WithLabelValues(group).Set(v)
	}
	for _, x := range conflicts {
		logger.Error(nil, "An APIService of a group this install registers for podpilot points at another Service; "+
			"podpilot does not replace it and its clients read that Service. Delete it to hand the group to podpilot, "+
			"or leave the group out of the install (docs/alongside.md)",
			"apiService", x.APIService, "group", x.Group, "service", x.Service, "podpilotService", c.owner.String())
	}
}

// run checks at start and then every apiServiceCheckPeriod until ctx is done. It never fails:
// a conflict is reported, not fatal, since podpilot still serves its own autoscaler in-process.
func (c *apiServiceChecker) run(ctx context.Context) error {
	wait.UntilWithContext(ctx, c.update, apiServiceCheckPeriod)
	return nil
}

// apiServiceGroups returns the groups to check: custom and external metrics less those
// skipped, and metrics.k8s.io when podpilot serves it.
func apiServiceGroups(o *APIServiceOptions, servesResourceMetrics bool) []string {
	var groups []string
	for _, g := range []string{customMetricsGroup, externalMetricsGroup} {
		if !slices.Contains(o.SkipGroups, g) {
			groups = append(groups, g)
		}
	}
	if servesResourceMetrics {
		groups = append(groups, resourceMetricsGroup)
	}
	return groups
}

// addAPIServiceCheck builds the APIService check of o on restCfg, its gauge in registry, and
// returns its run.
func addAPIServiceCheck(o *APIServiceOptions, restCfg *rest.Config, registry metrics.KubeRegistry,
	servesResourceMetrics bool) (func(context.Context) error, error) {
	owner, err := o.owner()
	if err != nil {
		return nil, err
	}
	client, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("build dynamic client for APIServices: %w", err)
	}
	c, err := newAPIServiceChecker(client, owner, apiServiceGroups(o, servesResourceMetrics), registry)
	if err != nil {
		return nil, err
	}
	return c.run, nil
}
