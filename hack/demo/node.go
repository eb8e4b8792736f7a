package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

// The real node: podpilot installed by its chart as pods, the workload
// (test/workload) as real pods behind a Service, and the load sent from the
// host to that Service's ClusterIP through kube-proxy.

// nodeImages are the images the real-node demo imports into the node's
// containerd: hack/build-image.sh's tarballs (the pause image is imported
// by hack/local-up.sh).
var nodeImages = []string{"podpilot", "workload"}

// imageTarball is hack/build-image.sh's tarball of image name.
func imageTarball(name string) string {
	return filepath.Join(framework.RepoRoot(), "_output", "images", name+".tar")
}

// workloadImage is the workload's image as hack/build-image.sh tags it.
func workloadImage(tag string) string { return "localhost/podpilot/workload:" + tag }

// installChart imports the images and installs podpilot with Helm as users
// do (framework.InstallChart: two replicas, the cluster's Prometheus through
// its Service, a verified serving certificate, metrics.k8s.io from cAdvisor),
// with the demo's shortened periods, and waits for its APIServices.
func (d *demo) installChart(ctx context.Context) error {
	for _, name := range nodeImages {
		if err := d.cluster.ImportImage(ctx, imageTarball(name)); err != nil {
			return err
		}
	}
	d.step("Imported the images %s:%s and %s into the node's containerd (built offline by hack/build-image.sh)",
		framework.PodpilotImageRepository, d.opts.imageTag, workloadImage(d.opts.imageTag))
	start := time.Now()
	args := append(slices.Clone(shortenedArgs), "-v=2")
	if err := d.cluster.InstallChart(ctx, framework.ChartInstall{Tag: d.opts.imageTag, ExtraArgs: args}); err != nil {
		return fmt.Errorf("helm install podpilot: %w", err)
	}
	d.step("Installed podpilot with Helm (charts/podpilot) in %s: 2 replicas in %s, leader election,\n"+
		"Prometheus at %s (Service monitoring/prometheus), the default rules\n"+
		"plus cAdvisor resourceRules for metrics.k8s.io, periods shortened for the demo:\n  %s",
		time.Since(start).Round(100*time.Millisecond), framework.PodpilotNamespace, d.cluster.Node.PrometheusServiceURL,
		strings.Join(shortenedArgs, " "))
	for _, name := range framework.MetricsAPIServices {
		err := framework.Poll(ctx, demoAPIWait, "APIService "+name+" Available", func(ctx context.Context) (bool, string, error) {
			return d.cluster.APIServiceAvailable(ctx, name)
		})
		if err != nil {
			return fmt.Errorf("podpilot's APIServices: %w", err)
		}
	}
	d.resources = true
	d.step("APIServices %s are Available\nthrough the Service %s/podpilot, the serving certificate verified against their caBundle",
		strings.Join(framework.MetricsAPIServices, ", "), framework.PodpilotNamespace)
	return nil
}

// startNodeWorkload applies test/workload/deploy (Deployment and Service
// vg1-vanguard, the image built here) into the demo namespace, waits for its
// pod to be Ready and aims the load at the Service's ClusterIP.
func (d *demo) startNodeWorkload(ctx context.Context) error {
	ns := []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + d.namespace + "}\n")
	if _, err := d.cluster.ApplyErr(ctx, "", ns, false); err != nil {
		return fmt.Errorf("create namespace %s: %w", d.namespace, err)
	}
	objs, err := workloadObjects(framework.RepoRoot(), workloadImage(d.opts.imageTag))
	if err != nil {
		return err
	}
	start := time.Now()
	for _, o := range objs {
		doc, err := json.Marshal(o.Object)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		if _, err := d.cluster.ApplyErr(ctx, d.namespace, doc, false); err != nil {
			return fmt.Errorf("apply %s %s/%s: %w", o.GetKind(), d.namespace, o.GetName(), err)
		}
	}
	err = framework.Poll(ctx, 2*time.Minute, "a Ready pod of "+workload, func(ctx context.Context) (bool, string, error) {
		dep, err := d.cluster.Client.AppsV1().Deployments(d.namespace).Get(ctx, workload, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("get deployment %s/%s: %w", d.namespace, workload, err)
		}
		return dep.Status.ReadyReplicas == minReplicas, fmt.Sprintf("%d Ready pods", dep.Status.ReadyReplicas), nil
	})
	if err != nil {
		return fmt.Errorf("start deployment %s/%s: %w", d.namespace, workload, err)
	}
	ready := time.Since(start)
	svc, err := d.cluster.Client.CoreV1().Services(d.namespace).Get(ctx, workload, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get service %s/%s: %w", d.namespace, workload, err)
	}
	url := "http://" + svc.Spec.ClusterIP + "/query"
	if d.load, err = newNodeLoad(url); err != nil {
		return err
	}
	d.step("Deployment %s/%s (test/workload/deploy) runs 1 pod of test/workload, Ready %s after it was applied\n"+
		"(a 5s start-up); its pods count the queries they answer in %s, which Prometheus scrapes\n"+
		"(kubernetes_sd_configs, pod role) and the default rules serve as %s = rate(%s[1m]) per pod;\n"+
		"cpu and memory are the containers' own, from the kubelet's cAdvisor through podpilot's metrics.k8s.io.\n"+
		"The load goes from this host to the Service's ClusterIP, %s, through kube-proxy",
		d.namespace, workload, ready.Round(100*time.Millisecond), seriesName, metricName, seriesName, url)
	return nil
}

// readGuards reads the real node's guard counters into d.guardPackets:
// every packet they dropped would have left the machine.
func (d *demo) readGuards(ctx context.Context) error {
	if !d.real() {
		return nil
	}
	n, err := d.cluster.GuardPackets(ctx)
	if err != nil {
		return err
	}
	d.guardPackets = n
	return nil
}

// guardsHeld fails if the guards dropped a packet: something tried to
// leave the machine.
func (d *demo) guardsHeld() error {
	if d.guardPackets != 0 {
		return fmt.Errorf("the guards (%s) dropped %d packets: something tried to leave the machine", d.cluster.Node.GuardChain, d.guardPackets)
	}
	return nil
}
