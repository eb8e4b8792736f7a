// Package election holds a replica's share of the autoscaler's bucket Leases with one client-go
// leader elector per Lease it tries, as package shard plans, and tells the controller which
// PodAutoscalers it owns. It must not import pkg/autoscaler/controller: the controller is its Owner.
package election
