// Package hpaconv converts autoscaling/v2 HorizontalPodAutoscalers into their exact PodAutoscaler
// equivalents, with kube-controller-manager's HPA flags made explicit, and refuses with the field
// and the reason what has no exact equivalent. It is pure: it imports the API types and nothing
// that does I/O (no client-go, no clock).
package hpaconv
