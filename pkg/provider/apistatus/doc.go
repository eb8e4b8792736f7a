// Package apistatus maps the errors of podpilot's metrics providers to the
// Kubernetes API statuses a client can act on (400, 404, 503, 504, 500).
package apistatus
