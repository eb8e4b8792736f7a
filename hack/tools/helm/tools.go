//go:build tools

// Package helm records the helm command so that go.mod pins it.
package helm

import _ "helm.sh/helm/v3/cmd/helm"
