package main

import (
	"fmt"
	"strings"
	"time"
)

// header explains what the demo shows before anything starts; nodeText
// fills in the node.
const header = `
podpilot demo
=============
podpilot is one process with both halves of autoscaling on Prometheus data:
  1. a metrics API server: custom.metrics.k8s.io and external.metrics.k8s.io served from
     Prometheus as an aggregated APIService, read by anyone through the kube-apiserver;
  2. an embedded autoscaler: the HPA algorithm for its own PodAutoscaler resource
     (kubectl get ppa), scaling Deployments and StatefulSets.
%s
Set-up:
`

// nodeText is the header's paragraph about the node and the workload.
var nodeText = map[string]string{
	nodeKwok: `
On a real local control plane (etcd, kube-apiserver, kube-controller-manager, a kwok node,
Prometheus), the design seed's example runs: PodAutoscaler hpa-vg1-vanguard keeps Deployment
vg1-vanguard between 1 and 5 pods at 2000 zdns_vanguard_qps per pod, while the demo offers
0 → 12000 → 1000 qps, spread evenly over the running pods. About 4–5 minutes.
`,
	nodeReal: `
On a real local control plane with a real kubelet node (containerd, runc, kube-proxy, a CNI
bridge), podpilot is installed by its Helm chart as two pods, and the design seed's example runs
unchanged: PodAutoscaler hpa-vg1-vanguard keeps Deployment vg1-vanguard (test/workload: it answers
queries and spends cpu and memory on them) between 1 and 5 pods at 2000 zdns_vanguard_qps per pod,
cpu Utilization 50% and memory 256Mi, while the demo sends 0 → 12000 → 1000 qps to its Service.
New pods start, become Ready and take traffic. About 5–6 minutes.
`,
}

// tableLegend explains the columns once, under the set-up lines.
const tableLegend = `
Load profile, one row every 5s (time = since the profile started):
  offered      total qps the demo sends, and its share per pod that takes traffic
               (the Ready pods on the real node, where the Service sends only to them)
  served/pod   zdns_vanguard_qps averaged over the pods, as the custom metrics API serves it
               through the kube-apiserver (what the autoscaler reads):
               GET %s?labelSelector=app=%s
  cpu          cpu Utilization: the pods' cpu usage in percent of their requests, as the
               PodAutoscaler last read it from metrics.k8s.io (the example's target: 50%%)
  mem/pod      the pods' average memory, likewise (the example's target: 256Mi)
  desired      the PodAutoscaler's status.desiredReplicas
  pods         pods Ready / the Deployment's spec.replicas, one ■ per replica
  condition    what limits the autoscaler now: ScalingLimited's reason if True, else AbleToScale's
Note: served qps is rate() over 1m, so it reads low for the first minute and trails every
change by up to a minute; the autoscaler sees the same lag.`

const rowFormat = "%5s  %-6s  %7s  %11s  %10s  %4s  %7s  %7s  %-11s  %s"

func (d *demo) printHeader() {
	fmt.Fprintf(d.out, header, nodeText[d.opts.node])
}

func tableHeader() string {
	legend := fmt.Sprintf(tableLegend, servedPath(demoNamespace), workload)
	head := fmt.Sprintf(rowFormat, "time", "phase", "offered", "offered/pod", "served/pod", "cpu", "mem/pod", "desired", "pods", "condition")
	return legend + "\n\n" + head + "\n" + strings.Repeat("─", 103)
}

func phaseLine(about string) string {
	return "  ── " + about
}

func tableRow(s sample) string {
	served := "-"
	if s.servedOK {
		served = fmt.Sprintf("%.0f", s.served)
	}
	cpu, memory := "-", "-"
	if s.cpuOK {
		cpu = fmt.Sprintf("%d%%", s.cpuUtil)
	}
	if s.memoryOK {
		memory = fmt.Sprintf("%.0fMi", s.memory/(1<<20))
	}
	pods := fmt.Sprintf("%d/%d %s", s.ready, s.current, strings.Repeat("■", int(s.current)))
	return fmt.Sprintf(rowFormat, clockString(s.at), s.phase, fmt.Sprintf("%.0f", s.offered),
		fmt.Sprintf("%.0f", s.offeredPerPod), served, cpu, memory, fmt.Sprint(s.desired), pods, s.condition)
}

// clockString formats d as m:ss.
func clockString(d time.Duration) string {
	d = d.Round(time.Second)
	return fmt.Sprintf("%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
}

// rescales lists the replica changes the samples saw, e.g. "1→4 at 0:20".
func rescales(samples []sample) []string {
	var out []string
	for i := 1; i < len(samples); i++ {
		prev, cur := samples[i-1], samples[i]
		if cur.current != prev.current {
			out = append(out, fmt.Sprintf("%d→%d at %s (%s)", prev.current, cur.current, clockString(cur.at), cur.phase))
		}
	}
	return out
}

// printSummary prints what happened and whether it is what the demo shows.
func (d *demo) printSummary(took time.Duration, verdict error) {
	last := d.samples[len(d.samples)-1]
	var peak, peakHold int32
	var maxServed float64
	for _, s := range d.samples {
		peak = max(peak, s.current)
		if s.phase == "hold" {
			peakHold = max(peakHold, s.current)
		}
		maxServed = max(maxServed, s.served)
	}
	fmt.Fprintf(d.out, "\nSummary\n=======\n")
	fmt.Fprintf(d.out, "  run time:     %s (set-up included), load profile %s\n", took.Round(time.Second), clockString(last.at))
	fmt.Fprintf(d.out, "  rescales:     %s\n", strings.Join(rescales(d.samples), ", "))
	fmt.Fprintf(d.out, "  peak:         %d replicas during the hold (max %d), served qps peaked at %.0f per pod\n", peakHold, maxReplicas, maxServed)
	fmt.Fprintf(d.out, "  end:          %s at %.0f qps offered (%.0f served per pod)\n", replicasString(last.current), last.offered, last.served)
	fmt.Fprintf(d.out, "  metrics:      %s\n", d.metricsNote())
	for _, r := range d.rescaleReasons {
		fmt.Fprintf(d.out, "  decided by:   %s\n", r)
	}
	if d.load != nil {
		if l := d.load.describe(); l != "" {
			fmt.Fprintf(d.out, "  load:         %s\n", l)
		}
	}
	if d.real() {
		fmt.Fprintf(d.out, "  podpilot:     %s during the profile (2 pods; metrics.k8s.io)\n", d.podpilotPeak)
		fmt.Fprintf(d.out, "  guards:       %d packets would have left the machine\n", d.guardPackets)
	}
	if verdict != nil {
		fmt.Fprintf(d.out, "  result:       FAILED: %v\n\n", verdict)
		return
	}
	fmt.Fprintf(d.out, "  result:       OK: scaled up to %d and back down to %d once the load fell\n\n", peakHold, last.current)
}

func replicasString(n int32) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

// metricsNote says which of the example's metrics the PodAutoscaler follows.
func (d *demo) metricsNote() string {
	if d.real() {
		return "zdns_vanguard_qps 2000/pod, cpu 50%, memory 256Mi (the containers' own, from cAdvisor via podpilot's metrics.k8s.io)"
	}
	if d.resources {
		return "zdns_vanguard_qps 2000/pod, cpu 50%, memory 256Mi (cpu and memory from metrics.k8s.io)"
	}
	return "zdns_vanguard_qps 2000/pod (the example's cpu/memory targets were left out: no metrics.k8s.io)"
}

// chartNotes is the chart's subtitle, one string a line.
func (d *demo) chartNotes() []string {
	notes := []string{
		fmt.Sprintf("PodAutoscaler %s (%s) on Deployment %s, %d–%d replicas",
			autoscaler, examplePath, workload, minReplicas, maxReplicas),
		"metrics: " + d.metricsNote(),
	}
	const periods = "qps = rate over 1m; sync 5s, downscale stabilization 30s (shortened for the demo)"
	if d.real() {
		return append(notes, "real node: test/workload pods (kubelet, containerd); the load goes to the Service's ClusterIP through kube-proxy",
			"podpilot: 2 pods installed by charts/podpilot; "+periods)
	}
	return append(notes, "kwok node: the pods run nothing; a host exporter plays their counter, cpu and memory",
		"podpilot: bin/podpilot on the host; "+periods)
}
