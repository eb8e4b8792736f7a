package scenario

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Pod shapes of scenario g (Config.PodShape).
const (
	// PodShapeMinimal is the framework's pod template: one container with cpu and memory
	// requests and an app label.
	PodShapeMinimal = "minimal"
	// PodShapeRealistic is shaped like a real Deployment's pod: annotations and more labels,
	// an app and a sidecar container with env, ports, probes, limits and volume mounts, a
	// configMap and an emptyDir volume.
	PodShapeRealistic = "realistic"
)

// podShapeText describes shape for the report.
func podShapeText(shape string) string {
	if shape == PodShapeRealistic {
		return "the realistic pod shape: 4 labels, 3 annotations, an app and a sidecar container with 6 env vars each, " +
			"ports, readiness and liveness probes, requests and limits, volume mounts, a configMap and an emptyDir volume"
	}
	return "the minimal pod shape: the framework's pod template, one container with cpu and memory requests and an app label"
}

// shapePodTemplate gives the pod template t of the Deployment name the given shape.
func shapePodTemplate(t *corev1.PodTemplateSpec, name, shape string) {
	t.Spec.TerminationGracePeriodSeconds = new(int64)
	if shape != PodShapeRealistic {
		return
	}
	t.Labels["tier"] = "backend"
	t.Labels["team"] = "payments"
	t.Labels["version"] = "v1.42.0"
	t.Annotations = map[string]string{
		"prometheus.io/scrape": "true",
		"prometheus.io/port":   "9090",
		"example.com/oncall":   "payments-oncall@example.com",
	}
	app := &t.Spec.Containers[0]
	app.Env = benchEnv("APP", name)
	app.Ports = []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
		{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}}
	app.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}
	app.ReadinessProbe = httpProbe("/ready", 8080)
	app.LivenessProbe = httpProbe("/healthz", 8080)
	app.VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "cache", MountPath: "/var/cache/app"}}
	t.Spec.Containers = append(t.Spec.Containers, corev1.Container{
		Name:  "proxy",
		Image: "registry.invalid/podpilot/proxy:1.30.2",
		Args:  []string{"--listen=:15001", "--upstream=127.0.0.1:8080", "--log-level=info"},
		Env:   benchEnv("PROXY", name),
		Ports: []corev1.ContainerPort{{Name: "proxy", ContainerPort: 15001, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
		ReadinessProbe: httpProbe("/ready", 15021),
		LivenessProbe:  httpProbe("/healthz", 15021),
		VolumeMounts:   []corev1.VolumeMount{{Name: "config", MountPath: "/etc/proxy", ReadOnly: true}},
	})
	t.Spec.Volumes = []corev1.Volume{
		{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name + "-config"}}}},
		{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
}

// benchEnv is six environment variables of a container of the Deployment name.
func benchEnv(prefix, name string) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: prefix + "_NAME", Value: name},
		{Name: prefix + "_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
	}
	for i := range 4 {
		env = append(env, corev1.EnvVar{Name: fmt.Sprintf("%s_SETTING_%d", prefix, i), Value: fmt.Sprintf("value-%d-of-a-typical-configuration", i)})
	}
	return env
}

// httpProbe is an HTTP GET probe of path on port.
func httpProbe(path string, port int) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt(port)}},
		PeriodSeconds: 10, TimeoutSeconds: 1, FailureThreshold: 3,
	}
}
