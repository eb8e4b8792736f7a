//go:build tools

// Package tools pins the real node's kubelet and kube-proxy at Kubernetes
// 1.36, one minor below the control plane (hack/tools, a supported skew):
// kubelet 1.37 no longer takes cAdvisor's --containerd flag, and the real
// node's containerd listens on a socket of its own, not the default one
// cAdvisor would look for (docs/local-cluster.md). Build them with
// `hack/build-tools.sh node`.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
