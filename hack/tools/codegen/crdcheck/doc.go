// Package crdcheck tests the generated PodAutoscaler CRD offline: the API server's own CRD
// validation (CEL compilation and cost), and admission of example objects (schema, list maps, CEL).
package crdcheck
