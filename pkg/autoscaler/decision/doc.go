// Package decision makes one round's pure scaling decision for one autoscaler: fast paths, per-metric
// proposals combined by the largest, normalization, conditions and the updated history.
// It must not import client-go, the Prometheus client, k8s.io/kubernetes, or call time.Now.
package decision
