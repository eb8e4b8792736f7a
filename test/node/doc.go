// Package node is the real-node tier (`make test-node`): podpilot installed
// by its chart as pods on a kubelet node with containerd, Prometheus finding
// targets through the API, metrics-server as the anchor, and Day 2 faults.
// Every test ends by reading the node's guards: no packet may leave the machine.
package node
