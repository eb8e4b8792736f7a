package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/autoscalertest"
	"github.com/podpilot/podpilot/pkg/autoscaler/metrics"
	podpilotfake "github.com/podpilot/podpilot/pkg/generated/clientset/versioned/fake"
	"github.com/podpilot/podpilot/pkg/generated/informers/externalversions"
	"github.com/podpilot/podpilot/pkg/podcache"
)

const ns = autoscalertest.Namespace

var (
	now       = autoscalertest.Now
	paKey     = cache.ObjectName{Namespace: ns, Name: autoscalertest.Name}
	podLabels = map[string]string{"app": "vg1-vanguard"}
)

// customFunc is a CustomSource made of a function.
type customFunc func(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error)

func (f customFunc) GetMetricBySelector(ctx context.Context, namespace string, selector labels.Selector, info provider.CustomMetricInfo, metricSelector labels.Selector) (*custom_metrics.MetricValueList, error) {
	return f(ctx, namespace, selector, info, metricSelector)
}

// resourceFunc is a ResourceSource made of a function.
type resourceFunc func(ctx context.Context, namespace string) (*metricsv1beta1.PodMetricsList, error)

func (f resourceFunc) ListPodMetrics(ctx context.Context, namespace string) (*metricsv1beta1.PodMetricsList, error) {
	return f(ctx, namespace)
}

// qpsPerPod serves the same custom value for each named pod, and counts nothing: batching is
// the metrics package's concern.
func qpsPerPod(value string, pods ...string) customFunc {
	return func(_ context.Context, _ string, _ labels.Selector, _ provider.CustomMetricInfo, _ labels.Selector) (*custom_metrics.MetricValueList, error) {
		list := &custom_metrics.MetricValueList{}
		for _, p := range pods {
			list.Items = append(list.Items, custom_metrics.MetricValue{
				DescribedObject: custom_metrics.ObjectReference{Kind: "Pod", Namespace: ns, Name: p},
				Timestamp:       metav1.NewTime(now), Value: resource.MustParse(value),
			})
		}
		return list, nil
	}
}

// failingCustom fails every request with err.
func failingCustom(err error) customFunc {
	return func(context.Context, string, labels.Selector, provider.CustomMetricInfo, labels.Selector) (*custom_metrics.MetricValueList, error) {
		return nil, err
	}
}

// usagePerPod serves the same cpu and memory usage for each named pod.
func usagePerPod(cpu, memory string, pods ...string) resourceFunc {
	return func(context.Context, string) (*metricsv1beta1.PodMetricsList, error) {
		list := &metricsv1beta1.PodMetricsList{}
		for _, p := range pods {
			list.Items = append(list.Items, metricsv1beta1.PodMetrics{
				ObjectMeta: metav1.ObjectMeta{Name: p, Namespace: ns},
				Timestamp:  metav1.NewTime(now), Window: metav1.Duration{Duration: 30 * time.Second},
				Containers: []metricsv1beta1.ContainerMetrics{{Name: "vanguard", Usage: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
				}}},
			})
		}
		return list, nil
	}
}

// podNames returns the names of n pods of the seed's deployment.
func podNames(n int) []string {
	return podNamesWith("vg1-vanguard", n)
}

// podNamesWith returns the names prefix-0, prefix-1, ... of n pods.
func podNamesWith(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return names
}

// UIDs of the seed's workloads and of the Deployment's ReplicaSet, which their pods' and
// ReplicaSet's controller references name.
const (
	deploymentUID  types.UID = "uid-deployment-vg1-vanguard"
	replicaSetUID  types.UID = "uid-replicaset-vg1-vanguard-5d8f"
	statefulSetUID types.UID = "uid-statefulset-vg1-vanguard"
)

// controllerRef is a controller reference to kind/name with uid.
func controllerRef(kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}
}

// seedReplicaSet is the ReplicaSet of the seed's Deployment that owns seedPods' pods.
func seedReplicaSet() *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "vg1-vanguard-5d8f", Namespace: ns, UID: replicaSetUID,
		OwnerReferences: []metav1.OwnerReference{controllerRef("Deployment", "vg1-vanguard", deploymentUID)}}}
}

// seedPods returns n ready pods of the seed's Deployment (vg1-vanguard-0, ...) requesting 500m
// cpu and 512Mi memory, started an hour ago, followed by the ReplicaSet that owns them.
func seedPods(n int) []runtime.Object {
	return append(ownedPods(podNames(n), controllerRef("ReplicaSet", "vg1-vanguard-5d8f", replicaSetUID)), seedReplicaSet())
}

// statefulSetPods returns seedPods' pods named names, owned by the seed's StatefulSet.
func statefulSetPods(names ...string) []runtime.Object {
	return ownedPods(names, controllerRef("StatefulSet", "vg1-vanguard", statefulSetUID))
}

// ownedPods returns seedPods' pods named names, controlled by owner.
func ownedPods(names []string, owner metav1.OwnerReference) []runtime.Object {
	var out []runtime.Object
	for _, name := range names {
		start := metav1.NewTime(now.Add(-time.Hour))
		out = append(out, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: podLabels, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vanguard", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
			}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &start,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: start}}},
		})
	}
	return out
}

func seedDeployment(replicas int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "vg1-vanguard", Namespace: ns, UID: deploymentUID, ResourceVersion: "1"},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: podLabels}},
		Status:     appsv1.DeploymentStatus{Replicas: replicas},
	}
}

func seedStatefulSet(replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "vg1-vanguard", Namespace: ns, UID: statefulSetUID, ResourceVersion: "1"},
		Spec:       appsv1.StatefulSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: podLabels}},
		Status:     appsv1.StatefulSetStatus{Replicas: replicas},
	}
}

// seedAutoscaler is the seed 000 example; mutate adapts it per case.
var seedAutoscaler = autoscalertest.Seed

// checkpointed gives the seed autoscaler the status podpilot wrote at an earlier round, with the
// target at replicas: its first checkpoint (see checkpointBefore) is behind it.
func checkpointed(replicas int32) func(*podpilotv1alpha1.PodAutoscaler) {
	return func(pa *podpilotv1alpha1.PodAutoscaler) {
		pa.Status.ObservedGeneration, pa.Status.CurrentReplicas, pa.Status.DesiredReplicas = pa.Generation, replicas, replicas
	}
}

// fixture is a controller over fake clientsets whose informer indexers are seeded from the
// clientsets before each sync.
type fixture struct {
	t        *testing.T
	kube     *kubefake.Clientset
	podpilot *podpilotfake.Clientset
	clock    *clocktesting.FakeClock
	recorder *events.FakeRecorder
	custom   customFunc
	resource resourceFunc
	// external serves external metrics; set it and restart to use it.
	external externalFunc
	// history serves the metrics' history; set it and restart to use it.
	history metrics.HistorySource
	// statusLimiter is the controller's status write budget; nil is unlimited.
	statusLimiter flowcontrol.RateLimiter
	// ownership says which PodAutoscalers the controller runs; nil is every one.
	ownership Ownership
	kubeInf   kubeinformers.SharedInformerFactory
	ppInf     externalversions.SharedInformerFactory
	ctrl      *Controller
}

func newFixture(t *testing.T, custom customFunc, res resourceFunc, objs ...runtime.Object) *fixture {
	t.Helper()
	var kubeObjs, ppObjs []runtime.Object
	for _, o := range objs {
		if _, ok := o.(*podpilotv1alpha1.PodAutoscaler); ok {
			ppObjs = append(ppObjs, o)
			continue
		}
		kubeObjs = append(kubeObjs, o)
	}
	f := &fixture{
		t: t, kube: kubefake.NewClientset(kubeObjs...), podpilot: podpilotfake.NewSimpleClientset(ppObjs...),
		clock: clocktesting.NewFakeClock(now), recorder: events.NewFakeRecorder(100), custom: custom, resource: res,
	}
	addScaleReactors(f.kube)
	f.restart()
	return f
}

// restart builds a new controller, with empty caches, over the same clientsets.
func (f *fixture) restart() {
	f.t.Helper()
	f.kubeInf = kubeinformers.NewSharedInformerFactory(f.kube, 0)
	f.ppInf = externalversions.NewSharedInformerFactory(f.podpilot, 0)
	cfg := Config{
		KubeClient: f.kube, PodpilotClient: f.podpilot, KubeInformers: f.kubeInf, PodpilotInformers: f.ppInf,
		Recorder: f.recorder, Clock: f.clock, Options: *NewOptions(), StatusLimiter: f.statusLimiter, Ownership: f.ownership,
	}
	if f.custom != nil {
		cfg.CustomSource = f.custom
	}
	if f.resource != nil {
		cfg.ResourceSource = f.resource
	}
	if f.external != nil {
		cfg.ExternalSource = f.external
	}
	if f.history != nil {
		cfg.History = f.history
	}
	ctrl, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	f.ctrl = ctrl
}

// runReal runs a controller built from cfg (over f's clientsets and informers, on the real clock)
// while during runs, then stops it and the informers.
func (f *fixture) runReal(cfg Config, during func(*Controller)) {
	f.t.Helper()
	cfg.KubeClient, cfg.PodpilotClient, cfg.KubeInformers, cfg.PodpilotInformers = f.kube, f.podpilot, f.kubeInf, f.ppInf
	cfg.Recorder, cfg.Clock = f.recorder, clock.RealClock{}
	ctrl, err := New(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(f.t.Context())
	f.kubeInf.Start(ctx.Done())
	f.ppInf.Start(ctx.Done())
	done := make(chan error, 1)
	go func() { done <- ctrl.Run(ctx) }()
	during(ctrl)
	cancel()
	if err := <-done; err != nil {
		f.t.Fatal(err)
	}
	f.kubeInf.Shutdown()
	f.ppInf.Shutdown()
}

// sync seeds the indexers from the clientsets and runs one round for the seed autoscaler.
func (f *fixture) sync() error {
	f.t.Helper()
	f.seedCaches()
	return f.ctrl.sync(f.t.Context(), paKey)
}

// seedCaches replaces the informers' contents with the clientsets' objects.
func (f *fixture) seedCaches() {
	f.t.Helper()
	ctx := f.t.Context()
	pas, err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	pods, _ := f.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	deployments, _ := f.kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	statefulSets, _ := f.kube.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
	replace(f.t, f.ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer(), pas.Items)
	replace(f.t, f.kubeInf.Core().V1().Pods().Informer(), pods.Items)
	replace(f.t, f.kubeInf.Apps().V1().Deployments().Informer(), deployments.Items)
	replace(f.t, f.kubeInf.Apps().V1().StatefulSets().Informer(), statefulSets.Items)
	replicaSets, _ := f.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	hpas, _ := f.kube.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	replace(f.t, f.kubeInf.Apps().V1().ReplicaSets().Informer(), replicaSets.Items)
	replace(f.t, f.kubeInf.Autoscaling().V2().HorizontalPodAutoscalers().Informer(), hpas.Items)
}

func replace[T any](t *testing.T, inf cache.SharedIndexInformer, items []T) {
	t.Helper()
	objs := make([]any, 0, len(items))
	var pods podcache.Compactor // pods are cached compact, as cmd/adapter's transform caches them
	for i := range items {
		obj, err := pods.Transform(&items[i])
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, obj)
	}
	if err := inf.GetIndexer().Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
}

// autoscaler returns the seed autoscaler as stored.
func (f *fixture) autoscaler() *podpilotv1alpha1.PodAutoscaler {
	f.t.Helper()
	pa, err := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(ns).Get(f.t.Context(), paKey.Name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return pa
}

// replicas returns the stored spec.replicas of the seed's deployment or statefulset, 0 when
// it does not exist.
func (f *fixture) replicas(kind string) int32 {
	f.t.Helper()
	gvr := appsv1.SchemeGroupVersion.WithResource("deployments")
	if kind == "statefulset" {
		gvr = appsv1.SchemeGroupVersion.WithResource("statefulsets")
	}
	obj, err := f.kube.Tracker().Get(gvr, ns, "vg1-vanguard")
	if apierrors.IsNotFound(err) {
		return 0
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return scaleOf(obj).Spec.Replicas
}

// events drains the recorded events as "Type Reason" pairs and the full lines.
func (f *fixture) events() (reasons []string, lines []string) {
	for {
		select {
		case e := <-f.recorder.Events:
			fields := strings.SplitN(e, " ", 3)
			reasons = append(reasons, fields[0]+" "+fields[1])
			lines = append(lines, e)
		default:
			return reasons, lines
		}
	}
}

// statusWrites counts the UpdateStatus calls made on PodAutoscalers.
func (f *fixture) statusWrites() int {
	n := 0
	for _, a := range f.podpilot.Actions() {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// scaleCalls counts the calls on the scale subresource by verb.
func (f *fixture) scaleCalls() map[string]int {
	out := map[string]int{}
	for _, a := range f.kube.Actions() {
		if a.GetSubresource() == "scale" {
			out[a.GetVerb()]++
		}
	}
	return out
}

// condition returns the condition of type typ as "Status Reason".
func condition(pa *podpilotv1alpha1.PodAutoscaler, typ string) string {
	for _, c := range pa.Status.Conditions {
		if c.Type == typ {
			return string(c.Status) + " " + c.Reason
		}
	}
	return "<none>"
}

// addScaleReactors serves the scale subresource of deployments and statefulsets from the
// tracker, as the API server does: a scale shares its workload's resourceVersion, and an update
// carrying another one is a conflict.
func addScaleReactors(client *kubefake.Clientset) {
	for _, res := range []string{"deployments", "statefulsets"} {
		gvr := appsv1.SchemeGroupVersion.WithResource(res)
		client.PrependReactor("get", res, func(a clienttesting.Action) (bool, runtime.Object, error) {
			if a.GetSubresource() != "scale" {
				return false, nil, nil
			}
			obj, err := client.Tracker().Get(gvr, a.GetNamespace(), a.(clienttesting.GetAction).GetName())
			if err != nil {
				return true, nil, err
			}
			return true, scaleOf(obj), nil
		})
		client.PrependReactor("update", res, updateScale(client, gvr))
	}
}

// updateScale applies a scale update of the workloads of gvr to client's tracker.
func updateScale(client *kubefake.Clientset, gvr schema.GroupVersionResource) clienttesting.ReactionFunc {
	return func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "scale" {
			return false, nil, nil
		}
		scale := a.(clienttesting.UpdateAction).GetObject().(*autoscalingv1.Scale)
		obj, err := client.Tracker().Get(gvr, a.GetNamespace(), scale.Name)
		if err != nil {
			return true, nil, err
		}
		meta := obj.(metav1.Object)
		if rv := scale.ResourceVersion; rv != "" && rv != meta.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), scale.Name, fmt.Errorf("resourceVersion %s, stored %s", rv, meta.GetResourceVersion()))
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			o.Spec.Replicas = ptr.To(scale.Spec.Replicas)
		case *appsv1.StatefulSet:
			o.Spec.Replicas = ptr.To(scale.Spec.Replicas)
		}
		bumpResourceVersion(meta)
		return true, scale, client.Tracker().Update(gvr, obj, a.GetNamespace())
	}
}

// bumpResourceVersion stands in for the API server's counter.
func bumpResourceVersion(m metav1.Object) {
	n, _ := strconv.Atoi(m.GetResourceVersion())
	m.SetResourceVersion(strconv.Itoa(n + 1))
}

func scaleOf(obj runtime.Object) *autoscalingv1.Scale {
	s := &autoscalingv1.Scale{}
	switch o := obj.(type) {
	case *appsv1.Deployment:
		s.ObjectMeta = metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, ResourceVersion: o.ResourceVersion}
		s.Spec.Replicas = ptr.Deref(o.Spec.Replicas, 1)
	case *appsv1.StatefulSet:
		s.ObjectMeta = metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, ResourceVersion: o.ResourceVersion}
		s.Spec.Replicas = ptr.Deref(o.Spec.Replicas, 1)
	}
	return s
}
