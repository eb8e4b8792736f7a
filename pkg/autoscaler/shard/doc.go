// Package shard assigns PodAutoscalers to a fixed number of buckets (FNV-1a of "namespace/name",
// not of the namespace, so that one namespace with thousands of PodAutoscalers still spreads) and
// decides which bucket Leases a replica tries or releases to hold its fair share. Pure: Leases and
// the time come in. It must not import client-go, the Prometheus client, k8s.io/kubernetes, or call time.Now.
package shard
