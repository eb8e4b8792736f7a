// Package autoscaler holds podpilot's embedded Horizontal Pod Autoscaler; its subpackages are the pure algorithm and the controller.
package autoscaler
