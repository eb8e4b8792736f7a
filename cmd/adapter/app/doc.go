// Package app builds podpilot from its flags: options, the API server and,
// in later stages, the metrics provider and the autoscaler, under one context.
package app
