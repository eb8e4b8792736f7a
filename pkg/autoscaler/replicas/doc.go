// Package replicas computes one metric's replica proposal from pods, per-pod samples and a target,
// porting the behaviour of upstream's HPA replica calculator.
// It must not import client-go, the Prometheus client, k8s.io/kubernetes, or call time.Now.
package replicas
