package framework

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomAndExternalAPIServices are MetricsAPIServices less metrics.k8s.io:
// what podpilot serves when its rule file has no resourceRules.
var CustomAndExternalAPIServices = slices.DeleteFunc(slices.Clone(MetricsAPIServices), func(name string) bool {
	_, group, _ := strings.Cut(name, ".")
	return group == "metrics.k8s.io"
})

// RegisterSomeMetricsAPIs is RegisterMetricsAPIs for a podpilot that serves
// only some of MetricsAPIServices, e.g. no metrics.k8s.io because its rules
// have no resourceRules: it points the APIServices in names at port, deletes
// the others (an APIService without a backend breaks discovery for every
// client), and waits until those in names are Available.
func (c *Cluster) RegisterSomeMetricsAPIs(ctx context.Context, port int, names ...string) error {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if _, err := c.apply(ctx, "", localAPIServices(port), opts); err != nil {
		return err
	}
	for _, name := range MetricsAPIServices {
		if slices.Contains(names, name) {
			continue
		}
		err := c.Dynamic.Resource(apiServiceGVR).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete APIService %s: %w", name, err)
		}
	}
	for _, name := range names {
		err := Poll(ctx, time.Minute, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return c.apiServiceAvailable(ctx, name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
