package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The ServiceAccount manifests/ runs podpilot as.
const (
	podpilotNamespace      = "podpilot-system"
	podpilotServiceAccount = "podpilot"
)

// TestManifests checks manifests/ against the real API server: every object
// is admitted, and podpilot runs with nothing but the RBAC they grant.
func TestManifests(t *testing.T) {
	ctx := t.Context()
	base := renderKustomization(ctx, t, "manifests")
	addon := renderKustomization(ctx, t, filepath.Join("manifests", "overlays", "resource-metrics"))
	t.Run("every object is admitted by a server-side dry-run, without warnings", func(t *testing.T) {
		testManifestsDryRun(t, slices.Concat(base, addon))
	})
	t.Run("podpilot runs as its ServiceAccount with only the manifests' RBAC", func(t *testing.T) {
		testManifestsRBAC(t, base)
	})
	t.Run("the documented uninstall selector leaves out the CRD, and only it", testUninstallSelector)
}

// testUninstallSelector runs docs/install.md's uninstall, `kubectl delete -k manifests/ -l
// app.kubernetes.io/component!=crd`, as a server-side dry-run: it would delete the Namespace
// but not the CRD, which the same command without the selector would.
func testUninstallSelector(t *testing.T) {
	deleted := func(selector ...string) string {
		args := append([]string{"delete", "-k", filepath.Join(framework.RepoRoot(), "manifests"), "--dry-run=server",
			"--ignore-not-found", "-o", "name", "--kubeconfig", cluster.Kubeconfig}, selector...)
		kubectl, err := framework.ToolPath("KUBECTL")
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(t.Context(), kubectl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	const crd = "customresourcedefinition.apiextensions.k8s.io/podautoscalers.autoscaling.podpilot.io"
	if all := deleted(); !strings.Contains(all, crd) {
		t.Fatalf("kubectl delete -k manifests/ would not delete the CRD:\n%s", all)
	}
	kept := deleted("-l", "app.kubernetes.io/component!=crd")
	if strings.Contains(kept, crd) || !strings.Contains(kept, "namespace/"+podpilotNamespace) {
		t.Errorf("with the selector, kubectl would delete:\n%s\nwant the Namespace and not the CRD", kept)
	}
}

// testManifestsDryRun applies the Namespace and the CRD for real (namespaced
// objects cannot be dry-run into a namespace that does not exist; both are
// shared with TestMain's podpilot, so they are never deleted) and every other
// object with server-side dry-run. The namespace enforces and warns on the
// restricted Pod Security Standard, so a non-compliant pod template shows up
// as a warning.
func testManifestsDryRun(t *testing.T, objs []*unstructured.Unstructured) {
	ctx := t.Context()
	warnings := &warningRecorder{}
	cfg := rest.CopyConfig(cluster.Config)
	cfg.WarningHandler = warnings
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dry := *cluster
	dry.Dynamic = dyn
	var dryRun []*unstructured.Unstructured
	for _, o := range objs {
		if k := o.GetKind(); k != "Namespace" && k != "CustomResourceDefinition" {
			dryRun = append(dryRun, o)
			continue
		}
		if _, err := cluster.ApplyErr(ctx, "", objectJSON(t, o), false); err != nil {
			t.Fatalf("apply %s: %v", objectRef(o), err)
		}
	}
	for _, o := range dryRun {
		warnings.texts = nil
		if _, err := dry.ApplyErr(ctx, "", objectJSON(t, o), true); err != nil {
			t.Errorf("dry-run %s: %v", objectRef(o), err)
			continue
		}
		if len(warnings.texts) > 0 {
			t.Errorf("dry-run %s: warnings %q", objectRef(o), warnings.texts)
		}
	}
	t.Logf("%d objects dry-run", len(dryRun))
}

// testManifestsRBAC proves that the RBAC suffices and is needed: podpilot,
// run with the Deployment's args and a token of the ServiceAccount, is
// forbidden without the manifests' RBAC objects; with them it gets ready,
// takes its Lease, serves a pod and a namespace metric (its authentication
// and authorization delegation and its informers all run as the
// ServiceAccount), and logs nothing forbidden. SubjectAccessReviews check
// every grant the code needs, including the writes (scale, status, events)
// no live run here reaches, and what must stay denied.
func testManifestsRBAC(t *testing.T, objs []*unstructured.Unstructured) {
	ctx := t.Context()
	var rbac []*unstructured.Unstructured
	byKind := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			rbac = append(rbac, o)
		default:
			byKind[o.GetKind()] = o
		}
	}
	for _, kind := range []string{"Namespace", "ServiceAccount", "ConfigMap", "Deployment"} {
		if byKind[kind] == nil {
			t.Fatalf("manifests have no %s", kind)
		}
	}
	// The namespace is shared with TestMain's APIService routing: never deleted.
	if _, err := cluster.ApplyErr(ctx, "", objectJSON(t, byKind["Namespace"]), false); err != nil {
		t.Fatal(err)
	}
	// Leftovers of an interrupted run would void the forbidden check.
	deleteObjects(ctx, t, rbac)
	sa := byKind["ServiceAccount"]
	t.Cleanup(func() { deleteObjects(context.WithoutCancel(ctx), t, append(slices.Clone(rbac), sa)) })
	if _, err := cluster.ApplyErr(ctx, "", objectJSON(t, sa), false); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := cluster.ServiceAccountKubeconfig(ctx, t.TempDir(), podpilotNamespace, podpilotServiceAccount, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	lease := "podpilot-e2e-" + rand.String(5)
	args := podpilotArgs(t, byKind["Deployment"], rulesFile(t, byKind["ConfigMap"]), kubeconfig, lease)
	t.Logf("podpilot args: %q", args)

	t.Run("without the RBAC objects it is forbidden", func(t *testing.T) {
		p := cluster.StartPodpilot(t, podpilotBinary, args...)
		framework.WaitFor(ctx, t, time.Minute, "a forbidden error in podpilot's log", func(context.Context) (bool, string, error) {
			line := forbiddenLine(p.LogTail(1 << 24))
			return strings.Contains(line, podpilotUser), "log: " + p.LogTail(300), nil
		})
		t.Logf("as expected: %s", forbiddenLine(p.LogTail(1<<24)))
		p.Stop()
	})
	for _, o := range rbac {
		if _, err := cluster.ApplyErr(ctx, "", objectJSON(t, o), false); err != nil {
			t.Fatalf("apply %s: %v", objectRef(o), err)
		}
	}
	t.Run("view, edit and admin aggregate podautoscalers", testAggregatedRoles)
	t.Run("SubjectAccessReviews: what podpilot needs is allowed, the rest denied", testServiceAccountAccess)
	t.Run("with them it runs without a forbidden error", func(t *testing.T) {
		testPodpilotAsServiceAccount(t, args, lease)
	})
}

func testPodpilotAsServiceAccount(t *testing.T, args []string, lease string) {
	ctx := t.Context()
	p := cluster.StartPodpilot(t, podpilotBinary, args...)
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		t.Fatalf("%v\nfirst forbidden error: %s", err, forbiddenLine(p.LogTail(1<<24)))
	}
	{
		t.Cleanup(func() {
			err := cluster.Client.CoordinationV1().Leases(podpilotNamespace).Delete(context.WithoutCancel(ctx), lease, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Logf("delete lease %s: %v", lease, err)
			}
		})
		framework.WaitFor(ctx, t, time.Minute, "Lease "+podpilotNamespace+"/"+lease+" held", func(ctx context.Context) (bool, string, error) {
			l, err := cluster.Client.CoordinationV1().Leases(podpilotNamespace).Get(ctx, lease, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			holder := ""
			if l.Spec.HolderIdentity != nil {
				holder = *l.Spec.HolderIdentity
			}
			return holder != "", "holder " + holder, nil
		})
	}

	// A pod and a namespace metric, asked of this podpilot directly as cluster-admin.
	ns := cluster.CreateNamespace(ctx, t, "rbac")
	pods := startWorkload(ctx, t, ns, "probe", 1)
	exp := serveExporter(t)
	exp.SetGauge("podpilot_rbac_probe", map[string]string{"namespace": ns, "pod": pods[0]}, 3)
	exp.SetGauge("podpilot_rbac_namespace_probe", map[string]string{"namespace": ns}, 5)
	direct, err := kubernetes.NewForConfig(cluster.DirectConfig(p))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ path, value string }{
		{"/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/pods/*/podpilot_rbac_probe", "3"},
		{"/apis/custom.metrics.k8s.io/v1beta2/namespaces/" + ns + "/metrics/podpilot_rbac_namespace_probe", "5"},
	} {
		framework.WaitFor(ctx, t, time.Minute, q.value+" from "+q.path, func(ctx context.Context) (bool, string, error) {
			b, err := direct.CoreV1().RESTClient().Get().AbsPath(q.path).DoRaw(ctx)
			if err != nil {
				return false, "", err
			}
			return strings.Contains(string(b), `"value":"`+q.value+`"`), string(b), nil
		})
	}

	// Watches, resyncs and (as leader) autoscaler rounds keep running: nothing
	// may be forbidden for a while.
	const quiet = 10 * time.Second
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, quiet, true, func(context.Context) (bool, error) {
		if p.Exited() {
			return false, errors.New("podpilot exited")
		}
		if line := forbiddenLine(p.LogTail(1 << 24)); line != "" {
			return false, fmt.Errorf("podpilot's log has a forbidden error: %s", line)
		}
		return false, nil
	})
	if !wait.Interrupted(err) {
		t.Fatal(err)
	}
	t.Logf("no forbidden error in podpilot's log after %s more", quiet)
}

// access is one request of a SubjectAccessReview.
type access struct {
	user                                         string
	verb, group, resource, subresource, ns, name string
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	return fmt.Sprintf("%s %s %s in %q named %q", a.user, a.verb, r, a.ns, a.name)
}

const (
	podpilotUser = "system:serviceaccount:" + podpilotNamespace + ":" + podpilotServiceAccount
	hpaUser      = "system:serviceaccount:kube-system:horizontal-pod-autoscaler"
)

// pp is an access of podpilot's ServiceAccount.
func pp(verb, group, resource, subresource, ns, name string) access {
	return access{podpilotUser, verb, group, resource, subresource, ns, name}
}

// neededAccess is everything podpilot does, in every namespace ("" is all
// namespaces; "demo" stands for any one).
var neededAccess = []access{
	// metrics API: metadata informers of the default rules' resources
	pp("list", "", "pods", "", "", ""), pp("watch", "", "pods", "", "", ""),
	pp("list", "", "namespaces", "", "", ""), pp("watch", "", "namespaces", "", "", ""),
	// the APIService check: read only, and only podpilot's groups
	pp("get", "apiregistration.k8s.io", "apiservices", "", "", "v1beta1.external.metrics.k8s.io"),
	pp("get", "apiregistration.k8s.io", "apiservices", "", "", "v1beta1.metrics.k8s.io"),
	// API server: delegated authentication and authorization
	pp("create", "authentication.k8s.io", "tokenreviews", "", "", ""),
	pp("create", "authorization.k8s.io", "subjectaccessreviews", "", "", ""),
	pp("get", "", "configmaps", "", "kube-system", "extension-apiserver-authentication"),
	pp("watch", "", "configmaps", "", "kube-system", "extension-apiserver-authentication"),
	// autoscaler: informers, scale, status, resource metrics, events
	pp("list", "autoscaling.podpilot.io", "podautoscalers", "", "", ""),
	pp("watch", "autoscaling.podpilot.io", "podautoscalers", "", "", ""),
	pp("get", "autoscaling.podpilot.io", "podautoscalers", "", "demo", "web"),
	pp("update", "autoscaling.podpilot.io", "podautoscalers", "status", "demo", "web"),
	pp("list", "apps", "deployments", "", "", ""), pp("watch", "apps", "deployments", "", "", ""),
	pp("list", "apps", "statefulsets", "", "", ""), pp("watch", "apps", "statefulsets", "", "", ""),
	pp("list", "apps", "replicasets", "", "", ""), pp("watch", "apps", "replicasets", "", "", ""),
	pp("list", "autoscaling", "horizontalpodautoscalers", "", "", ""), pp("watch", "autoscaling", "horizontalpodautoscalers", "", "", ""),
	pp("get", "apps", "deployments", "scale", "demo", "web"), pp("update", "apps", "deployments", "scale", "demo", "web"),
	pp("get", "apps", "statefulsets", "scale", "demo", "db"), pp("update", "apps", "statefulsets", "scale", "demo", "db"),
	pp("list", "metrics.k8s.io", "pods", "", "demo", ""),
	pp("create", "events.k8s.io", "events", "", "demo", ""), pp("patch", "events.k8s.io", "events", "", "demo", "web.1"),
	// leader election
	pp("get", "coordination.k8s.io", "leases", "", podpilotNamespace, "podpilot"),
	pp("create", "coordination.k8s.io", "leases", "", podpilotNamespace, ""),
	pp("update", "coordination.k8s.io", "leases", "", podpilotNamespace, "podpilot"),
	// --autoscaler-shards: the bucket Leases and member slots, listed to see their holders
	pp("list", "coordination.k8s.io", "leases", "", podpilotNamespace, ""),
	pp("update", "coordination.k8s.io", "leases", "", podpilotNamespace, "podpilot-0"),
	// the HorizontalPodAutoscaler controller reads podpilot's APIs
	{hpaUser, "get", "custom.metrics.k8s.io", "pods", "", "demo", "*"},
	{hpaUser, "list", "external.metrics.k8s.io", "zdns_vanguard_qps", "", "demo", ""},
}

// deniedAccess is what podpilot's ServiceAccount must not be able to do.
var deniedAccess = []access{
	pp("get", "", "secrets", "", "demo", "token"), pp("list", "", "secrets", "", "", ""),
	pp("create", "", "pods", "", "demo", ""), pp("delete", "", "pods", "", "demo", "web-1"),
	pp("list", "", "nodes", "", "", ""), pp("list", "", "services", "", "", ""),
	pp("get", "", "configmaps", "", "kube-system", "kube-proxy"),
	// a workload's replicas through the scale subresource, nothing else of it
	pp("update", "apps", "deployments", "", "demo", "web"), pp("patch", "apps", "deployments", "", "demo", "web"),
	pp("update", "apps", "statefulsets", "", "demo", "db"), pp("delete", "apps", "deployments", "", "demo", "web"),
	pp("patch", "apps", "deployments", "scale", "demo", "web"),
	// ReplicaSets and HorizontalPodAutoscalers are read, never written
	pp("update", "apps", "replicasets", "scale", "demo", "web-5d8f"),
	pp("update", "autoscaling", "horizontalpodautoscalers", "", "demo", "web"),
	// a PodAutoscaler's status, never its spec
	pp("update", "autoscaling.podpilot.io", "podautoscalers", "", "demo", "web"),
	pp("create", "autoscaling.podpilot.io", "podautoscalers", "", "demo", ""),
	pp("delete", "autoscaling.podpilot.io", "podautoscalers", "", "demo", "web"),
	// Leases of its own namespace only
	pp("update", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager"),
	pp("delete", "coordination.k8s.io", "leases", "", podpilotNamespace, "podpilot"),
	pp("get", "custom.metrics.k8s.io", "pods", "", "demo", "*"),
	// APIServices are read, never written, and only podpilot's groups
	pp("update", "apiregistration.k8s.io", "apiservices", "", "", "v1beta1.external.metrics.k8s.io"),
	pp("delete", "apiregistration.k8s.io", "apiservices", "", "", "v1beta1.external.metrics.k8s.io"),
	pp("get", "apiregistration.k8s.io", "apiservices", "", "", "v1.apps"),
}

func testServiceAccountAccess(t *testing.T) {
	ctx := t.Context()
	// RBAC objects reach the authorizer within moments of their creation.
	framework.WaitFor(ctx, t, 30*time.Second, "the RBAC objects in effect", func(ctx context.Context) (bool, string, error) {
		allowed, err := allows(ctx, neededAccess[0])
		return allowed, neededAccess[0].String() + " denied", err
	})
	for _, want := range []struct {
		allowed bool
		list    []access
	}{{true, neededAccess}, {false, deniedAccess}} {
		for _, a := range want.list {
			allowed, err := allows(ctx, a)
			if err != nil {
				t.Error(err)
			} else if allowed != want.allowed {
				t.Errorf("%s: allowed=%t, want %t", a, allowed, want.allowed)
			}
		}
	}
}

// allows asks the API server whether a's user, a ServiceAccount, may do a.
func allows(ctx context.Context, a access) (bool, error) {
	ns := strings.Split(a.user, ":")[2]
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   a.user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.ns, Name: a.name,
		},
	}}
	res, err := cluster.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("review %s: %w", a, err)
	}
	return res.Status.Allowed, nil
}

// testAggregatedRoles waits until the built-in view, edit and admin roles
// carry the podautoscalers rules of the labelled ClusterRoles.
func testAggregatedRoles(t *testing.T) {
	ctx := t.Context()
	for role, verb := range map[string]string{"view": "watch", "edit": "create", "admin": "deletecollection"} {
		framework.WaitFor(ctx, t, 30*time.Second, "ClusterRole "+role+" allows "+verb+" podautoscalers", func(ctx context.Context) (bool, string, error) {
			r, err := cluster.Client.RbacV1().ClusterRoles().Get(ctx, role, metav1.GetOptions{})
			if err != nil {
				return false, "", err
			}
			for _, rule := range r.Rules {
				if slices.Contains(rule.APIGroups, "autoscaling.podpilot.io") && slices.Contains(rule.Resources, "podautoscalers") &&
					slices.Contains(rule.Verbs, verb) {
					return true, "", nil
				}
			}
			return false, fmt.Sprintf("%d rules, none for podautoscalers with %s", len(r.Rules), verb), nil
		})
	}
}

// renderKustomization renders the kustomization in dir, relative to the
// repository root, with the pinned kubectl's `kubectl kustomize` (kustomize v5; the kustomize Go
// library's latest release needs a newer Go than the module's).
func renderKustomization(ctx context.Context, t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	kubectl, err := framework.ToolPath("KUBECTL")
	if err != nil {
		t.Fatalf("rendering %s needs the kubectl `make tools` builds (kustomize v5): %v", dir, err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, kubectl, "kustomize", filepath.Join(framework.RepoRoot(), dir))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("decode kubectl kustomize %s: %v", dir, err)
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 {
		t.Fatalf("kubectl kustomize %s rendered no objects", dir)
	}
	return objs
}

// podpilotArgs turns the args of the Deployment's podpilot container into a
// local run's as the ServiceAccount of kubeconfig: Prometheus and the rule
// file are the test's, and --secure-port goes, because StartPodpilot serves
// on a free port of 127.0.0.1 (--secure-port, --bind-address). The
// kubeconfig flags come after StartPodpilot's cluster-admin ones, and the
// last value of a flag wins (the forbidden check shows that it does).
func podpilotArgs(t *testing.T, deploy *unstructured.Unstructured, rulesFile, kubeconfig, lease string) []string {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(deploy.Object, "spec", "template", "spec", "containers")
	var deployArgs []string
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == "podpilot" {
			deployArgs, _, _ = unstructured.NestedStringSlice(m, "args")
		}
	}
	var args, replaced []string
	for _, a := range deployArgs {
		name, _, _ := strings.Cut(a, "=")
		switch name {
		case "--secure-port":
			replaced = append(replaced, name)
			continue
		case "--prometheus-url":
			a, replaced = name+"="+cluster.PrometheusURL, append(replaced, name)
		case "--config":
			a, replaced = name+"="+rulesFile, append(replaced, name)
		}
		args = append(args, a)
	}
	slices.Sort(replaced)
	if want := []string{"--config", "--prometheus-url", "--secure-port"}; !slices.Equal(replaced, want) {
		t.Fatalf("the Deployment's podpilot args %q set %q of %q", deployArgs, replaced, want)
	}
	args = append(args,
		"--lister-kubeconfig="+kubeconfig, "--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig,
		"--metrics-relist-interval=2s", "-v=2")
	return append(args, "--leader-elect-resource-namespace="+podpilotNamespace, "--leader-elect-resource-name="+lease)
}

// rulesFile writes the ConfigMap's rule file into a temporary file.
func rulesFile(t *testing.T, cm *unstructured.Unstructured) string {
	t.Helper()
	rules, ok, _ := unstructured.NestedString(cm.Object, "data", "rules.yaml")
	if !ok {
		t.Fatalf("ConfigMap %s has no data key rules.yaml", cm.GetName())
	}
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// forbiddenLine returns the first line of log that reports a forbidden
// request, or "".
func forbiddenLine(log string) string {
	s := bufio.NewScanner(strings.NewReader(log))
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		line := strings.ToLower(s.Text())
		// An event about another test's PodAutoscaler whose namespace is being
		// deleted is refused by the namespace lifecycle, not by RBAC.
		if strings.Contains(line, "forbidden") && !strings.Contains(line, "because it is being terminated") {
			return s.Text()
		}
	}
	return ""
}

// deleteObjects deletes objs, ignoring those already gone.
func deleteObjects(ctx context.Context, t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := cluster.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Errorf("map %s: %v", objectRef(o), err)
			continue
		}
		var ri dynamic.ResourceInterface = cluster.Dynamic.Resource(m.Resource)
		if o.GetNamespace() != "" {
			ri = cluster.Dynamic.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		if err := ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete %s: %v", objectRef(o), err)
		}
	}
}

func objectJSON(t *testing.T, o *unstructured.Unstructured) []byte {
	t.Helper()
	b, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatalf("encode %s: %v", objectRef(o), err)
	}
	return b
}

func objectRef(o *unstructured.Unstructured) string {
	if o.GetNamespace() == "" {
		return o.GetKind() + " " + o.GetName()
	}
	return o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
}

// warningRecorder keeps the API server's warnings of one request at a time
// (the requests are sequential).
type warningRecorder struct{ texts []string }

func (w *warningRecorder) HandleWarningHeader(_ int, _, text string) { w.texts = append(w.texts, text) }
