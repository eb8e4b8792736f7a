package controller

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/podcache"
)

// BenchmarkSteadyRound measures one round over n PodAutoscalers in 10 namespaces, each on its
// own Deployment of 2 pods at their target, once every status is written: the round a
// steady fleet runs every sync period, which reads caches and one metric fetch per namespace
// and writes nothing.
func BenchmarkSteadyRound(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("autoscalers=%d", n), func(b *testing.B) {
			t := &testing.T{}
			objs, pods, keys := fleet(n)
			perNamespace := customFunc(func(ctx context.Context, space string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
				return qpsPerPod("2000", pods[space]...)(ctx, space, sel, info, msel)
			})
			f := newFixture(t, perNamespace, nil, objs...)
			f.t = t
			seed := func() {
				for _, space := range []string{"ns0", "ns1", "ns2", "ns3", "ns4", "ns5", "ns6", "ns7", "ns8", "ns9"} {
					seedNamespace(b, f, space)
				}
			}
			seed()
			round := func() {
				for _, k := range keys {
					if err := f.ctrl.sync(b.Context(), k); err != nil {
						b.Fatal(err)
					}
				}
				f.clock.Step(DefaultSyncPeriod)
			}
			round()
			seed()
			if pa, _ := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(keys[0].Namespace).Get(b.Context(), keys[0].Name, metav1.GetOptions{}); condition(pa, podpilotv1alpha1.ConditionSelectorOverlap) != "False OwnPodsOnly" {
				b.Fatalf("SelectorOverlap = %s, want each Deployment's pods its own", condition(pa, podpilotv1alpha1.ConditionSelectorOverlap))
			}
			f.podpilot.ClearActions()
			b.ResetTimer()
			for b.Loop() {
				round()
			}
			if got := f.statusWrites(); got != 0 {
				b.Errorf("steady rounds wrote %d statuses, want 0", got)
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/autoscaler")
		})
	}
}

// fleet is n PodAutoscalers in 10 namespaces, each on its own Deployment of 2 pods (maxReplicas
// 10), mutated by mutate: the objects, the pod names per namespace and the PodAutoscalers' keys.
func fleet(n int, mutate ...func(*podpilotv1alpha1.PodAutoscaler)) ([]runtime.Object, map[string][]string, []cache.ObjectName) {
	var objs []runtime.Object
	pods := map[string][]string{}
	var keys []cache.ObjectName
	for i := range n {
		space, name := fmt.Sprintf("ns%d", i%10), fmt.Sprintf("w%d", i)
		lbl := map[string]string{"app": name}
		uid := types.UID(space + "-" + name)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-5d8f", Namespace: space, UID: uid + "-rs",
			OwnerReferences: []metav1.OwnerReference{controllerRef("Deployment", name, uid)}}}
		objs = append(objs, rs, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: space, UID: uid, ResourceVersion: "1"},
			Spec:       appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: lbl}},
		})
		for j := range 2 {
			pod := seedPods(1)[0].(*corev1.Pod)
			pod.Name, pod.Namespace, pod.Labels = fmt.Sprintf("%s-%d", name, j), space, lbl
			pod.OwnerReferences = []metav1.OwnerReference{controllerRef("ReplicaSet", rs.Name, rs.UID)}
			objs = append(objs, pod)
			pods[space] = append(pods[space], pod.Name)
		}
		pa := seedAutoscaler(append([]func(*podpilotv1alpha1.PodAutoscaler){func(pa *podpilotv1alpha1.PodAutoscaler) {
			pa.Name, pa.Namespace, pa.Spec.ScaleTargetName = name, space, name
			pa.Spec.MaxReplicas = 10
		}}, mutate...)...)
		objs = append(objs, pa)
		keys = append(keys, cache.ObjectName{Namespace: space, Name: name})
	}
	return objs, pods, keys
}

// seedNamespace replaces the informers' contents for one namespace with the clientsets' objects.
func seedNamespace(b *testing.B, f *fixture, space string) {
	ctx := b.Context()
	pas, _ := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(space).List(ctx, metav1.ListOptions{})
	pods, _ := f.kube.CoreV1().Pods(space).List(ctx, metav1.ListOptions{})
	deployments, _ := f.kube.AppsV1().Deployments(space).List(ctx, metav1.ListOptions{})
	replicaSets, _ := f.kube.AppsV1().ReplicaSets(space).List(ctx, metav1.ListOptions{})
	var compact podcache.Compactor // pods are cached compact, as cmd/adapter's transform caches them
	add := func(inf cache.SharedIndexInformer, objs []any) {
		for _, o := range objs {
			o, err := compact.Transform(o)
			if err != nil {
				b.Fatal(err)
			}
			if err := inf.GetIndexer().Update(o); err != nil {
				b.Fatal(err)
			}
		}
	}
	var a, p, d []any
	for i := range pas.Items {
		a = append(a, &pas.Items[i])
	}
	for i := range pods.Items {
		p = append(p, &pods.Items[i])
	}
	for i := range deployments.Items {
		d = append(d, &deployments.Items[i])
	}
	add(f.ppInf.Autoscaling().V1alpha1().PodAutoscalers().Informer(), a)
	add(f.kubeInf.Core().V1().Pods().Informer(), p)
	add(f.kubeInf.Apps().V1().Deployments().Informer(), d)
	var r []any
	for i := range replicaSets.Items {
		r = append(r, &replicaSets.Items[i])
	}
	add(f.kubeInf.Apps().V1().ReplicaSets().Informer(), r)
}
