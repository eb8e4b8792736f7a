// Package v1alpha1 defines the PodAutoscaler API of autoscaling.podpilot.io/v1alpha1.
// +kubebuilder:object:generate=true
// +groupName=autoscaling.podpilot.io
package v1alpha1
