// Package e2e holds podpilot's end-to-end tests. They run against a real
// local control plane (etcd, kube-apiserver, kube-controller-manager, kwok)
// and a real Prometheus, which TestMain starts once with hack/local-up.sh.
package e2e
