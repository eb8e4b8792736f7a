// Package state is the autoscaler leader's memory of each PodAutoscaler between its rounds (the
// history the algorithm reads, the ScaledToZero mark, the status last written), seeded from and
// checkpointed in the object's status, and merged with a stored checkpoint after a conflict.
// It must not import pkg/autoscaler/controller: the controller holds it through Store.
package state
