// Package provider serves Prometheus data as Kubernetes custom, external and resource metrics; its subpackages hold the rules, the Prometheus client and the API providers.
package provider
