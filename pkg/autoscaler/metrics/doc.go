// Package metrics feeds the autoscaler per-pod samples and per-object and external values: it
// declares the custom, external and resource metric sources it consumes and batches their calls
// per namespace and metric, so that the cost of a round grows with the distinct metrics, not with
// the number of autoscalers or described objects.
package metrics
