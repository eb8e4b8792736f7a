package main

import (
	"context"
	"encoding/json"
	"fmt"

	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// footprint is the most cpu and memory one of podpilot's pods used, as
// metrics.k8s.io (podpilot's own resourceRules) serves them.
type footprint struct {
	cpuCores, memoryBytes float64
}

// readFootprint keeps in d.podpilotPeak the most any podpilot pod uses now
// (real node only; a failed read is skipped: the figure is a by-product).
func (d *demo) readFootprint(ctx context.Context) {
	if !d.real() {
		return
	}
	body, err := d.cluster.RawGet(ctx, "/apis/metrics.k8s.io/v1beta1/namespaces/"+framework.PodpilotNamespace+"/pods")
	if err != nil {
		return
	}
	var list metricsv1beta1.PodMetricsList
	if json.Unmarshal(body, &list) != nil {
		return
	}
	d.podpilotPeak = d.podpilotPeak.max(podFootprints(list))
}

// podFootprints returns the most cpu and the most memory any pod of list uses.
func podFootprints(list metricsv1beta1.PodMetricsList) footprint {
	var out footprint
	for _, p := range list.Items {
		var pod footprint
		for _, c := range p.Containers {
			pod.cpuCores += c.Usage.Cpu().AsApproximateFloat64()
			pod.memoryBytes += c.Usage.Memory().AsApproximateFloat64()
		}
		out = out.max(pod)
	}
	return out
}

func (f footprint) max(o footprint) footprint {
	return footprint{cpuCores: max(f.cpuCores, o.cpuCores), memoryBytes: max(f.memoryBytes, o.memoryBytes)}
}

// String is e.g. "at most 41m cpu and 33 MiB per pod".
func (f footprint) String() string {
	return fmt.Sprintf("at most %.0fm cpu and %.0f MiB per pod", f.cpuCores*1000, f.memoryBytes/(1<<20))
}
