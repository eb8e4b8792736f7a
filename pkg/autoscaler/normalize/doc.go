// Package normalize turns a raw replica proposal into the replicas to apply: stabilization windows,
// scale rate limits and behaviors, clamping to [min, max], and the scale-event history they read.
// It must not import client-go, the Prometheus client, k8s.io/kubernetes, or call time.Now.
package normalize
