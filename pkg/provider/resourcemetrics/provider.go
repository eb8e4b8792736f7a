package resourcemetrics

import (
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/cache"
	"k8s.io/metrics/pkg/apis/metrics"
	"k8s.io/metrics/pkg/apis/metrics/install"
	"k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/clock"

	"github.com/podpilot/podpilot/pkg/provider/prometheus"
	"github.com/podpilot/podpilot/pkg/provider/rules"
)

// Config is everything New needs.
type Config struct {
	// Prometheus answers the cpu and memory queries.
	Prometheus prometheus.Client
	// Rules returns the resource-metric rules in force, e.g. metricsapi's
	// Provider.ResourceQueries, so that rule file reloads apply. While it returns nil (the
	// resourceRules were removed from the file) requests answer 503.
	Rules func() *rules.ResourceQueries
	// Pods lists the pods as the shared pod cache holds them (*podcache.Pod, or *corev1.Pod):
	// only those in phase Running are served. It resolves label selectors and the namespaces of
	// an all-namespaces list.
	Pods cache.GenericLister
	// Nodes lists node metadata; it resolves label selectors.
	Nodes cache.GenericLister
	// Clock gives the objects' creation timestamps; nil means the real clock.
	Clock clock.PassiveClock
}

// Provider serves metrics.k8s.io/v1beta1 pods and nodes from Prometheus. The caller builds it
// only when the rule file has resourceRules, since the API would otherwise answer nothing.
type Provider struct {
	prom   prometheus.Client
	rules  func() *rules.ResourceQueries
	pods   cache.GenericLister
	nodes  cache.GenericLister
	clock  clock.PassiveClock
	scheme *runtime.Scheme
}

// New checks cfg and returns a Provider.
func New(cfg Config) (*Provider, error) {
	var errs []error
	if cfg.Prometheus == nil {
		errs = append(errs, errors.New("prometheus client is required"))
	}
	if cfg.Rules == nil {
		errs = append(errs, errors.New("resource rules function is required"))
	}
	if cfg.Pods == nil {
		errs = append(errs, errors.New("pod lister is required"))
	}
	if cfg.Nodes == nil {
		errs = append(errs, errors.New("node lister is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("resource metrics provider config: %w", err)
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	return &Provider{prom: cfg.Prometheus, rules: cfg.Rules, pods: cfg.Pods, nodes: cfg.Nodes, clock: clk, scheme: scheme}, nil
}

// newScheme holds the metrics.k8s.io types and the meta types the generic handlers need. It
// is the provider's own: the API group is served with its own codecs, so custom-metrics-
// apiserver's apiserver.Scheme needs no change.
func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register meta types: %w", err)
	}
	return scheme, nil
}

// Install installs metrics.k8s.io/v1beta1 (pods and nodes) into server. The server's OpenAPI
// configs must define the metrics types (see AddOpenAPIDefinitions), or installing fails.
func (p *Provider) Install(server *genericapiserver.GenericAPIServer) error {
	info := genericapiserver.NewDefaultAPIGroupInfo(metrics.GroupName, p.scheme,
		runtime.NewParameterCodec(p.scheme), serializer.NewCodecFactory(p.scheme))
	// Only v1beta1 is served, whatever version priority the metrics install package sets.
	info.PrioritizedVersions = []schema.GroupVersion{v1beta1.SchemeGroupVersion}
	info.VersionedResourcesStorageMap[v1beta1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"pods":  &podStorage{p: p},
		"nodes": &nodeStorage{p: p},
	}
	if err := server.InstallAPIGroup(&info); err != nil {
		return fmt.Errorf("install API group %s: %w", v1beta1.SchemeGroupVersion.String(), err)
	}
	return nil
}
