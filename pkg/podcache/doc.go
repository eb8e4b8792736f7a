// Package podcache is the compact pod that podpilot's one cache of the cluster holds instead of a
// *corev1.Pod: the fields the metrics APIs and the autoscaler read, with the values a workload's
// pods repeat shared. It imports neither pkg/provider nor pkg/autoscaler; both read it.
package podcache
