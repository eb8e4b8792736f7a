package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

// examplePath is the seed's example as a PodAutoscaler, relative to the repository root.
const examplePath = "manifests/examples/hpa-vg1-vanguard.yaml"

// startPodpilot installs the CRD, runs bin/podpilot against the cluster,
// registers its APIServices and decides whether the example's cpu and memory
// targets can be kept.
func (d *demo) startPodpilot(ctx context.Context) error {
	if err := d.cluster.InstallCRDs(ctx); err != nil {
		return fmt.Errorf("install the CRDs: %w", err)
	}
	d.step("Installed the PodAutoscaler CRD (kubectl get ppa)")
	rulesFile, err := d.writeRules()
	if err != nil {
		return err
	}
	p, err := d.cluster.RunPodpilot(d.binary, append(slices.Clone(shortenedArgs), "-v=2", "--config="+rulesFile)...)
	if err != nil {
		return fmt.Errorf("run podpilot: %w", err)
	}
	d.pp = p
	if err := p.WaitReady(ctx, time.Minute); err != nil {
		if p.Exited() {
			log := p.LogTail(4000)
			if strings.Contains(log, "version string") {
				return fmt.Errorf("%w: bin/podpilot exited at start: its version is not vX.Y.Z (built without a git tag?); "+
					"rebuild with `make build VERSION=v0.0.0-dev`:\n%s", errPrerequisite, firstLines(log, 1))
			}
			return fmt.Errorf("bin/podpilot exited at start (log %s): %s", p.LogPath, firstLines(log, 3))
		}
		return fmt.Errorf("wait for podpilot: %w", err)
	}
	d.step("Started bin/podpilot (log %s)\nwith the default rules plus cAdvisor resourceRules (%s)\nand periods shortened for the demo:\n  %s",
		rel(p.LogPath), rel(rulesFile), strings.Join(shortenedArgs, " "))
	return d.registerAPIs(ctx)
}

// startWorkload creates the demo namespace and vg1-vanguard with one pod on
// the kwok node, and starts serving its load at 0 qps.
func (d *demo) startWorkload(ctx context.Context) error {
	ns := []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + d.namespace + "}\n")
	if _, err := d.cluster.ApplyErr(ctx, "", ns, false); err != nil {
		return fmt.Errorf("create namespace %s: %w", d.namespace, err)
	}
	dep := d.cluster.Deployment(workload, minReplicas)
	if _, err := d.cluster.Client.AppsV1().Deployments(d.namespace).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create deployment %s/%s: %w", d.namespace, workload, err)
	}
	err := framework.Poll(ctx, time.Minute, "a running pod of "+workload, func(ctx context.Context) (bool, string, error) {
		pods, err := d.cluster.RunningPods(ctx, d.namespace, workload)
		return len(pods) == minReplicas, fmt.Sprintf("%d running pods", len(pods)), err
	})
	if err != nil {
		return fmt.Errorf("start deployment %s/%s: %w", d.namespace, workload, err)
	}
	load, err := startKwokLoad(ctx, d.cluster, d.namespace, d.resources)
	if err != nil {
		return err
	}
	d.load = load
	msg := fmt.Sprintf("Deployment %s/%s runs 1 pod on %s; its pods export the counter %s,\n"+
		"served by the default rules as %s = rate(%s[1m]) per pod", d.namespace, workload, d.cluster.KwokNode, seriesName, metricName, seriesName)
	if d.resources {
		msg += fmt.Sprintf(",\nand cAdvisor cpu/memory series for metrics.k8s.io: cpu %.0fm + %.0fm per 1000 qps (100m requested), memory 64Mi",
			cpuBaseCores*1000, cpuCoresPer1kQPS*1000)
	}
	d.step("%s", msg)
	return nil
}

// applyAutoscaler applies the example PodAutoscaler (without its cpu and
// memory targets if those cannot be served) and waits until every metric in
// it has a value, so that no failing metric blocks scale-down. If the
// resource metrics fail anyway, it drops them and says so.
func (d *demo) applyAutoscaler(ctx context.Context) error {
	if err := d.applyExample(ctx); err != nil {
		return err
	}
	state, err := d.waitMetricsRead(ctx, 90*time.Second)
	// On the kwok node the cpu and memory series are the exporter's stand-ins;
	// on the real node the example runs unchanged or not at all.
	if err != nil && d.resources && !d.real() {
		d.step("cpu/memory targets dropped: the PodAutoscaler could not read them (%s);\na failing metric blocks scale-down", state)
		d.resources = false
		if err := d.applyExample(ctx); err != nil {
			return err
		}
		state, err = d.waitMetricsRead(ctx, 90*time.Second)
	}
	if err != nil {
		return fmt.Errorf("PodAutoscaler %s/%s never read its metrics: %w", d.namespace, autoscaler, err)
	}
	d.step("PodAutoscaler is active: %s", state)
	return nil
}

// applyExample server-side applies manifests/examples/hpa-vg1-vanguard.yaml
// into the demo namespace, without spec.resourceMetrics unless d.resources.
func (d *demo) applyExample(ctx context.Context) error {
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), examplePath))
	if err != nil {
		return fmt.Errorf("read %s: %w", examplePath, err)
	}
	obj := &unstructured.Unstructured{}
	if err := utilyaml.Unmarshal(raw, &obj.Object); err != nil {
		return fmt.Errorf("decode %s: %w", examplePath, err)
	}
	what := "zdns_vanguard_qps averageValue 2000, cpu 50%, memory 256Mi"
	if !d.resources {
		unstructured.RemoveNestedField(obj.Object, "spec", "resourceMetrics")
		what = "zdns_vanguard_qps averageValue 2000"
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return fmt.Errorf("encode PodAutoscaler %s: %w", autoscaler, err)
	}
	if _, err := d.cluster.ApplyErr(ctx, d.namespace, doc, false); err != nil {
		return fmt.Errorf("apply %s: %w", examplePath, err)
	}
	d.step("Applied PodAutoscaler %s from %s:\n%s %d–%d replicas on %s", autoscaler, examplePath, workload, minReplicas, maxReplicas, what)
	return nil
}

// waitMetricsRead waits until the PodAutoscaler's ScalingActive is True and
// every metric of its spec has a current value; it returns the last state seen.
func (d *demo) waitMetricsRead(ctx context.Context, timeout time.Duration) (string, error) {
	var last string
	err := framework.Poll(ctx, timeout, "the PodAutoscaler to read every metric", func(ctx context.Context) (bool, string, error) {
		pa, err := d.client.AutoscalingV1alpha1().PodAutoscalers(d.namespace).Get(ctx, autoscaler, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("get PodAutoscaler %s/%s: %w", d.namespace, autoscaler, err)
		}
		ok, state := metricsRead(pa)
		last = state
		return ok, state, nil
	})
	return last, err
}

// metricsRead reports whether pa's status is current, active and has a value
// for each metric of its spec, with a one-line description.
func metricsRead(pa *podpilotv1alpha1.PodAutoscaler) (bool, string) {
	active := meta.FindStatusCondition(pa.Status.Conditions, podpilotv1alpha1.ConditionScalingActive)
	if active == nil || pa.Status.ObservedGeneration != pa.Generation {
		return false, "no status for the current spec yet"
	}
	state := fmt.Sprintf("ScalingActive=%s (%s), targets %s", active.Status, active.Reason, pa.Status.Targets)
	want := len(pa.Spec.CustomMetrics) + len(pa.Spec.ResourceMetrics)
	read := 0
	for _, m := range pa.Status.CurrentMetrics {
		if m.AverageValue != nil {
			read++
		}
	}
	return active.Status == metav1.ConditionTrue && read == want, state
}

// firstLines returns the first n non-empty lines of s, joined by newlines.
func firstLines(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" && len(out) < n {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
