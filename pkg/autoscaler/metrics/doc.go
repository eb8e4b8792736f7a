// Package metrics feeds the autoscaler per-pod samples: it declares the custom and resource
// metric sources it consumes and batches their calls per namespace and metric, so that the cost
// of a round grows with the distinct metrics, not with the number of autoscalers.
package metrics
