// Module logcheck pins sigs.k8s.io/logtools' logcheck, run by `make verify`
// (hack/verify-lint.sh) to check structured, contextual klog calls.
module github.com/podpilot/podpilot/hack/tools/logcheck

go 1.26

require sigs.k8s.io/logtools v0.10.1

require (
	golang.org/x/exp v0.0.0-20240506185415-9bf2ced13842 // indirect
	golang.org/x/mod v0.21.0 // indirect
	golang.org/x/sync v0.8.0 // indirect
	golang.org/x/tools v0.26.0 // indirect
)
