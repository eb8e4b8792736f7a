package controller

import (
	"context"
	"time"

	"k8s.io/klog/v2"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/pkg/autoscaler/decision"
)

// logDecision logs the round's decision with how old its data was: for each metric read from
// per-pod samples (Pods, Resource, ContainerResource), the newest sample's timestamp as its
// source gave it. Object and External answers carry no sample time of their own: they were asked
// of Prometheus this round, or shared from a call at most the fetcher's freshness before (see
// metrics.Fetcher). A rescale is logged at V(2), any other decision at V(4).
func logDecision(ctx context.Context, pa *podpilotv1alpha1.PodAutoscaler, t target, d decision.Decision, metrics []decision.Metric) {
	logger := klog.FromContext(ctx).V(4)
	if d.Rescale {
		logger = klog.FromContext(ctx).V(2)
	}
	if !logger.Enabled() {
		return
	}
	newest := make(map[string]time.Time, len(metrics))
	for _, m := range metrics {
		if ts := newestSample(m); !ts.IsZero() {
			newest[string(m.Kind)+"/"+m.Name] = ts
		}
	}
	logger.Info("Decided", "podAutoscaler", klog.KObj(pa), "target", t.reference, "current", t.specReplicas,
		"desired", d.DesiredReplicas, "rescale", d.Rescale, "reason", d.Reason, "newestSample", newest)
}

// newestSample is the newest timestamp among m's per-pod samples; zero when m has none.
func newestSample(m decision.Metric) time.Time {
	var newest time.Time
	for _, s := range m.Samples {
		if s.Timestamp.After(newest) {
			newest = s.Timestamp
		}
	}
	return newest
}
