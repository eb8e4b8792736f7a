// Package specconv converts a PodAutoscaler's spec into the inputs of the pure algorithm
// packages (replicas targets, normalize behaviors), so that the controller and `podpilot replay`
// read a spec the same way. It is pure: it imports the API types and the algorithm packages,
// nothing that does I/O.
package specconv
