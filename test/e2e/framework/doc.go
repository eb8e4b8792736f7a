// Package framework brings up podpilot's real local control plane for
// end-to-end tests (through hack/local-up.sh) and gives tests helpers to
// apply objects, wait for conditions, run podpilot and drive the test exporter.
package framework
