package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

func readObject(t *testing.T, path string, into any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
}

// TestDeployObjectsMatchTheWorkload checks that deploy/ runs the workload the
// way its calibration and the demo assume, and as a restricted pod.
func TestDeployObjectsMatchTheWorkload(t *testing.T) {
	var dep appsv1.Deployment
	var svc corev1.Service
	readObject(t, "deploy/deployment.yaml", &dep)
	readObject(t, "deploy/service.yaml", &svc)
	pod := dep.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	opts, err := parseFlags(c.Args, io.Discard)
	if err != nil {
		t.Fatalf("the container's args are not the workload's flags: %v", err)
	}
	_, port, _ := net.SplitHostPort(opts.listen)
	s := newTestServer(t)
	probed := func(p *corev1.Probe) string {
		if p == nil || p.HTTPGet == nil {
			return "no HTTP probe"
		}
		code, _ := get(s, p.HTTPGet.Path)
		return fmt.Sprintf("%s on %s answers %d", p.HTTPGet.Path, p.HTTPGet.Port.String(), code)
	}
	heldMax := opts.maxHeldMemory.DeepCopy()
	heldMax.Add(resource.MustParse("64Mi")) // the Go runtime and HTTP buffers beside the held memory
	sc := c.SecurityContext
	tests := []struct {
		name      string
		got, want any
	}{
		{"the container port is the one --listen serves", fmt.Sprint(c.Ports[0].ContainerPort), port},
		{"Prometheus scrapes the pods", pod.Annotations["prometheus.io/scrape"], "true"},
		{"Prometheus scrapes the port --listen serves", pod.Annotations["prometheus.io/port"], port},
		{"Prometheus scrapes /metrics", pod.Annotations["prometheus.io/path"], "/metrics"},
		{"the Service sends to the named container port", svc.Spec.Ports[0].TargetPort.String(), c.Ports[0].Name},
		{"the Service selects the Deployment's pods", svc.Spec.Selector["app"], pod.Labels["app"]},
		{"readiness is /readyz (503 while starting)", probed(c.ReadinessProbe), "/readyz on http answers 503"},
		{"liveness is /livez, apart from readiness", probed(c.LivenessProbe), "/livez on http answers 200"},
		{"the cpu request is what the calibration is a share of", c.Resources.Requests.Cpu().String(), "100m"},
		{"the memory limit leaves room beside --max-held-memory", c.Resources.Limits.Memory().Cmp(heldMax) >= 0, true},
		{"the image is imported into the node, never pulled", c.ImagePullPolicy, corev1.PullNever},
		{"the pod runs as non-root", *pod.Spec.SecurityContext.RunAsNonRoot, true},
		{"the root filesystem is read-only", *sc.ReadOnlyRootFilesystem, true},
		{"no privilege escalation", *sc.AllowPrivilegeEscalation, false},
		{"every capability is dropped", fmt.Sprint(sc.Capabilities.Drop), "[ALL]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
}
