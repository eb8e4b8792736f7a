package migrate

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/podpilot/podpilot/pkg/autoscaler/hpaconv"
	"github.com/podpilot/podpilot/pkg/generated/clientset/versioned"
	"github.com/podpilot/podpilot/pkg/replay"
)

// Clients are the cluster's clients (nil in file mode), and Prometheus for --compare.
type Clients struct {
	// Kube reads and deletes HorizontalPodAutoscalers.
	Kube kubernetes.Interface
	// Podpilot reads and writes PodAutoscalers.
	Podpilot versioned.Interface
	// History reads Prometheus for --compare; nil connects with the --prometheus-* options.
	History replay.Source
}

// NewClients returns the clients of the cluster o names, as kubectl finds it.
func NewClients(o *Options) (*Clients, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	pp, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("podpilot client: %w", err)
	}
	return &Clients{Kube: kube, Podpilot: pp}, nil
}

// readFiles returns the HPAs of o's files, "-" being stdin.
func readFiles(o *Options, stdin io.Reader) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	var out []*autoscalingv2.HorizontalPodAutoscaler
	for _, f := range o.Files {
		var data []byte
		var err error
		if f == "-" {
			data, err = io.ReadAll(stdin)
		} else {
			data, err = os.ReadFile(f)
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		hpas, err := hpaconv.Decode(f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, hpas...)
	}
	return out, nil
}

// listHPAs returns the HPAs of namespace (all namespaces when empty), sorted by namespace and name.
func listHPAs(ctx context.Context, kube kubernetes.Interface, namespace string) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	list, err := kube.AutoscalingV2().HorizontalPodAutoscalers(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list HorizontalPodAutoscalers: %w", err)
	}
	out := make([]*autoscalingv2.HorizontalPodAutoscaler, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	slices.SortFunc(out, func(a, b *autoscalingv2.HorizontalPodAutoscaler) int {
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}
