// Package autoscaling holds the versions of the autoscaling.podpilot.io API group.
package autoscaling
