package app

import (
	"context"
	"fmt"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"

	"github.com/podpilot/podpilot/pkg/podcache"
	"github.com/podpilot/podpilot/pkg/provider/metricsapi"
)

// clusterInformers is podpilot's one cache of the cluster, shared by the metrics APIs and the
// autoscaler: a typed factory (pods, deployments, statefulsets, replicasets,
// horizontalpodautoscalers) and a metadata-only factory
// (every other resource a custom metric names, and nodes). Pods are cached once, as the compact
// *podcache.Pod, for every reader. Every object is stripped by a transform to the fields its
// readers use.
type clusterInformers struct {
	kube     kubeinformers.SharedInformerFactory
	metadata metadatainformer.SharedInformerFactory
	pods     podcache.Compactor
	// client is the typed factory's client; it and the metadata factory's are built from the
	// config given to newClusterInformers, whose QPS and burst (--client-qps, --client-burst)
	// are the informers' one API budget.
	client kubernetes.Interface
}

var _ metricsapi.Informers = (*clusterInformers)(nil)

// newClusterInformers builds the factories; nothing runs before Start.
func newClusterInformers(cfg *rest.Config) (*clusterInformers, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build kubernetes client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("build metadata client: %w", err)
	}
	c := &clusterInformers{client: kube}
	c.kube = kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithTransform(c.stripTyped))
	c.metadata = metadatainformer.NewSharedInformerFactoryWithOptions(meta, 0, metadatainformer.WithTransform(stripMetadata))
	return c, nil
}

// podsResource is the resource every reader of pods shares.
func podsResource() schema.GroupVersionResource {
	return corev1.SchemeGroupVersion.WithResource("pods")
}

// ForResource implements metricsapi.Informers: pods come from the typed factory (the
// autoscaler's pods), every other resource from the metadata factory.
func (c *clusterInformers) ForResource(gvr schema.GroupVersionResource) kubeinformers.GenericInformer {
	if gvr == podsResource() {
		if inf, err := c.kube.ForResource(gvr); err == nil {
			return inf
		}
	}
	return c.metadata.ForResource(gvr)
}

// Start implements metricsapi.Informers: it starts every informer asked for so far.
func (c *clusterInformers) Start(stopCh <-chan struct{}) {
	c.kube.Start(stopCh)
	c.metadata.Start(stopCh)
}

// StartWithContext is Start with ctx's logger.
func (c *clusterInformers) StartWithContext(ctx context.Context) {
	c.kube.StartWithContext(ctx)
	c.metadata.Start(ctx.Done())
}

// Shutdown waits for every informer to stop; the contexts they were started with must be done.
func (c *clusterInformers) Shutdown() {
	c.kube.Shutdown()
	c.metadata.Shutdown()
}

// stripTyped strips the typed factory's objects: pods to the compact *podcache.Pod, what the
// autoscaler and the metrics APIs read, ReplicaSets and HorizontalPodAutoscalers to what the autoscaler reads
// (stripReplicaSet, stripHPA), everything else of its managed fields.
func (c *clusterInformers) stripTyped(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return c.pods.Compact(o), nil
	case *appsv1.ReplicaSet:
		return c.stripReplicaSet(o), nil
	case *autoscalingv2.HorizontalPodAutoscaler:
		return stripHPA(o), nil
	}
	if m, err := apimeta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// stripReplicaSet keeps what the autoscaler's ownership chain (Deployment → ReplicaSet → Pod)
// reads: name, namespace, UID and owners.
func (c *clusterInformers) stripReplicaSet(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{
		Name: rs.Name, Namespace: unique.Make(rs.Namespace).Value(), UID: rs.UID, ResourceVersion: rs.ResourceVersion,
		OwnerReferences: c.pods.Owners(rs.OwnerReferences),
	}}
}

// stripHPA keeps what the autoscaler's two-autoscalers rule reads: name, namespace and the
// scale target.
func stripHPA(h *autoscalingv2.HorizontalPodAutoscaler) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: h.Name, Namespace: unique.Make(h.Namespace).Value(), UID: h.UID, ResourceVersion: h.ResourceVersion},
		Spec:       autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: h.Spec.ScaleTargetRef},
	}
}

// stripMetadata keeps what selector resolution needs (name, namespace, labels), to bound the
// metadata cache's memory.
func stripMetadata(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{
		TypeMeta: m.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name:            m.Name,
			Namespace:       m.Namespace,
			UID:             m.UID,
			ResourceVersion: m.ResourceVersion,
			Labels:          m.Labels,
		},
	}, nil
}
