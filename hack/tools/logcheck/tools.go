//go:build tools

// Package tools pins logcheck for hack/build-tools.sh.
package tools

import _ "sigs.k8s.io/logtools/logcheck"
