package controller

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/metrics/pkg/apis/custom_metrics"
	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// BenchmarkRestartWith500PredictivePodAutoscalers is a restart (or a failover) under
// prediction: 500 PodAutoscalers with spec.prediction (ScaleOut), each on a history of its own
// and each needing a reactive scale-up (2 pods at 3000 qps, 2000 per pod: 3 replicas), run their
// first round on a new controller, which holds no model, while every history read hangs (a slow
// Prometheus). It reports the rounds that missed their reactive scale or status write
// (missed-rounds; 0 is the goal) and the round's wall time per PodAutoscaler.
func BenchmarkRestartWith500PredictivePodAutoscalers(b *testing.B) {
	const n = 500
	t := &testing.T{}
	objs, pods, keys := fleet(n, predicting(podpilotv1alpha1.PredictionScaleOut))
	perNamespace := customFunc(func(ctx context.Context, space string, sel labels.Selector, info provider.CustomMetricInfo, msel labels.Selector) (*custom_metrics.MetricValueList, error) {
		return qpsPerPod("3000", pods[space]...)(ctx, space, sel, info, msel)
	})
	f := newFixture(t, perNamespace, nil, objs...)
	f.t = t
	h := &fakeHistory{Load: eveningRush, Gate: make(chan struct{})}
	defer close(h.Gate)
	f.history = h
	go func() { // the fake recorder holds 100 events; 500 rescales make 500
		for range f.recorder.Events {
		}
	}()
	var missed int
	var elapsed time.Duration
	for b.Loop() {
		f.restart()
		for _, space := range []string{"ns0", "ns1", "ns2", "ns3", "ns4", "ns5", "ns6", "ns7", "ns8", "ns9"} {
			seedNamespace(b, f, space)
		}
		start := time.Now()
		for _, k := range keys {
			if err := f.ctrl.sync(b.Context(), k); err != nil {
				missed++
			}
		}
		elapsed += time.Since(start)
		for _, k := range keys {
			d, err := f.kube.AppsV1().Deployments(k.Namespace).Get(b.Context(), k.Name, metav1.GetOptions{})
			pa, perr := f.podpilot.AutoscalingV1alpha1().PodAutoscalers(k.Namespace).Get(b.Context(), k.Name, metav1.GetOptions{})
			if err != nil || perr != nil || d.Spec.Replicas == nil || *d.Spec.Replicas != 3 || pa.Status.DesiredReplicas != 3 {
				missed++
			}
		}
	}
	b.ReportMetric(float64(missed)/float64(b.N), "missed-rounds")
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N*n), "round-ms/autoscaler")
}
