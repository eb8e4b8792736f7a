// Package prometheus is the Prometheus HTTP API client of podpilot: its flags,
// TLS and auth, timeouts, GET or POST, and errors a caller can map to HTTP 503
// (ErrUnavailable) or to a rejected query (ErrBadQuery).
package prometheus
