//go:build tools

// Package kwok records the kwok command so that go.mod pins it.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
