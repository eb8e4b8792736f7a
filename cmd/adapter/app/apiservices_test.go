package app

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
)

// apiService returns an APIService <version>.<group> pointing at ns/name, or local without ns.
func apiService(version, group, ns, name string) runtime.Object {
	spec := map[string]any{"group": group, "version": version}
	if ns != "" {
		spec["service"] = map[string]any{"namespace": ns, "name": name, "port": int64(443)}
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": version + "." + group}, "spec": spec,
	}}
}

// newFakeAPIServiceChecker returns a checker of groups for podpilot-system/podpilot over objs,
// and its registry.
func newFakeAPIServiceChecker(t *testing.T, groups []string, objs ...runtime.Object) (*apiServiceChecker, *dynamicfake.FakeDynamicClient, metrics.KubeRegistry) {
	t.Helper()
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{apiServicesResource: "APIServiceList"}, objs...)
	r := metrics.NewKubeRegistry()
	c, err := newAPIServiceChecker(client, types.NamespacedName{Namespace: "podpilot-system", Name: "podpilot"}, groups, r)
	if err != nil {
		t.Fatal(err)
	}
	return c, client, r
}

// TestAPIServiceCheck checks which APIServices podpilot reports as taken by another Service.
func TestAPIServiceCheck(t *testing.T) {
	both := []string{customMetricsGroup, externalMetricsGroup}
	for _, tc := range []struct {
		name   string
		groups []string
		objs   []runtime.Object
		want   []apiServiceConflict
	}{{
		name:   "APIServices that point at podpilot's Service are no conflict",
		groups: both,
		objs: []runtime.Object{apiService("v1beta2", customMetricsGroup, "podpilot-system", "podpilot"),
			apiService("v1beta1", customMetricsGroup, "podpilot-system", "podpilot"),
			apiService("v1beta1", externalMetricsGroup, "podpilot-system", "podpilot")},
	}, {
		name:   "absent APIServices are no conflict",
		groups: both,
	}, {
		name:   "KEDA's external APIService is a conflict naming its Service",
		groups: both,
		objs: []runtime.Object{apiService("v1beta2", customMetricsGroup, "podpilot-system", "podpilot"),
			apiService("v1beta1", externalMetricsGroup, "keda", "keda-operator-metrics-apiserver")},
		want: []apiServiceConflict{{APIService: "v1beta1.external.metrics.k8s.io", Group: externalMetricsGroup, Service: "keda/keda-operator-metrics-apiserver"}},
	}, {
		name:   "a group the install leaves out (external off beside KEDA) is not checked",
		groups: apiServiceGroups(&APIServiceOptions{SkipGroups: []string{externalMetricsGroup}}, false),
		objs:   []runtime.Object{apiService("v1beta1", externalMetricsGroup, "keda", "keda-operator-metrics-apiserver")},
	}, {
		name:   "a Service of the same name in another namespace is another Service",
		groups: both,
		objs:   []runtime.Object{apiService("v1beta1", customMetricsGroup, "monitoring", "podpilot")},
		want:   []apiServiceConflict{{APIService: "v1beta1.custom.metrics.k8s.io", Group: customMetricsGroup, Service: "monitoring/podpilot"}},
	}, {
		name:   "metrics-server's metrics.k8s.io is a conflict when podpilot serves resource metrics",
		groups: apiServiceGroups(&APIServiceOptions{}, true),
		objs:   []runtime.Object{apiService("v1beta1", resourceMetricsGroup, "kube-system", "metrics-server")},
		want:   []apiServiceConflict{{APIService: "v1beta1.metrics.k8s.io", Group: resourceMetricsGroup, Service: "kube-system/metrics-server"}},
	}, {
		name:   "an APIService without a Service (local) points elsewhere",
		groups: both,
		objs:   []runtime.Object{apiService("v1beta2", customMetricsGroup, "", "")},
		want:   []apiServiceConflict{{APIService: "v1beta2.custom.metrics.k8s.io", Group: customMetricsGroup, Service: "the kube-apiserver (local)"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c, client, _ := newFakeAPIServiceChecker(t, tc.groups, tc.objs...)
			got, err := c.check(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("conflicts (-want +got):\n%s", diff)
			}
			for _, a := range client.Actions() {
				if a.GetVerb() != "get" {
					t.Errorf("the check did %s %s: podpilot never writes APIServices", a.GetVerb(), a.GetResource().Resource)
				}
			}
		})
	}
}

// TestAPIServiceConflictGauge checks podpilot_apiservice_conflict: 1 for a group taken by another
// Service, 0 for one podpilot owns, and unchanged when the APIServices cannot be read.
func TestAPIServiceConflictGauge(t *testing.T) {
	c, client, r := newFakeAPIServiceChecker(t, []string{customMetricsGroup, externalMetricsGroup},
		apiService("v1beta1", externalMetricsGroup, "keda", "keda-operator-metrics-apiserver"))
	want := `
# HELP podpilot_apiservice_conflict [ALPHA] 1 when an APIService of a group this install registers for podpilot points at another Service than --apiservice-owner, by group; 0 when it points at podpilot or is absent.
# TYPE podpilot_apiservice_conflict gauge
podpilot_apiservice_conflict{group="custom.metrics.k8s.io"} 0
podpilot_apiservice_conflict{group="external.metrics.k8s.io"} 1
`
	c.update(t.Context())
	if err := testutil.GatherAndCompare(r, strings.NewReader(want), "podpilot_apiservice_conflict"); err != nil {
		t.Errorf("after a conflict: %v", err)
	}
	client.PrependReactor("get", "apiservices", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("forbidden")
	})
	c.update(t.Context())
	if err := testutil.GatherAndCompare(r, strings.NewReader(want), "podpilot_apiservice_conflict"); err != nil {
		t.Errorf("a failed read changed the gauge: %v", err)
	}
}

// TestAPIServiceOptionsValidate checks the flags' forms.
func TestAPIServiceOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       APIServiceOptions
		wantErr bool
	}{
		{name: "the defaults (check off) are valid", o: *NewAPIServiceOptions()},
		{name: "an owner is namespace/name", o: APIServiceOptions{Owner: "podpilot-system/podpilot", SkipGroups: []string{externalMetricsGroup}}},
		{name: "an owner without a namespace is refused", o: APIServiceOptions{Owner: "podpilot"}, wantErr: true},
		{name: "an owner with two slashes is refused", o: APIServiceOptions{Owner: "a/b/c"}, wantErr: true},
		{name: "an unknown group is refused", o: APIServiceOptions{SkipGroups: []string{"keda.sh"}}, wantErr: true},
		{name: "metrics.k8s.io is not skipped by flag: podpilot checks it only when it serves it", o: APIServiceOptions{SkipGroups: []string{resourceMetricsGroup}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if errs := tc.o.Validate(); (len(errs) > 0) != tc.wantErr {
				t.Errorf("Validate() = %v, want errors: %t", errs, tc.wantErr)
			}
		})
	}
}

// TestAPIServiceSkipGroupsAddUp checks that repeated --apiservice-skip-groups flags add up, as
// the chart and each kustomize component append one flag per group left out.
func TestAPIServiceSkipGroupsAddUp(t *testing.T) {
	o := NewAPIServiceOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--apiservice-owner=podpilot-system/podpilot",
		"--apiservice-skip-groups=custom.metrics.k8s.io", "--apiservice-skip-groups=external.metrics.k8s.io"}); err != nil {
		t.Fatal(err)
	}
	if errs := o.Validate(); len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := apiServiceGroups(o, false); len(got) != 0 {
		t.Errorf("groups checked with both skipped: %v", got)
	}
	if diff := cmp.Diff([]string{resourceMetricsGroup}, apiServiceGroups(o, true)); diff != "" {
		t.Errorf("groups checked when serving metrics.k8s.io (-want +got):\n%s", diff)
	}
}
