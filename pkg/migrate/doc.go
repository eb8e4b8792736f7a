// Package migrate is `podpilot migrate`: it reads HorizontalPodAutoscalers from files or a
// cluster, writes their PodAutoscaler equivalents (pkg/autoscaler/hpaconv) as YAML, and with
// --apply hands each target over from its HPA to its PodAutoscaler in an order that survives
// interruption.
package migrate
