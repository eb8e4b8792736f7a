package main

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// workloadManifests are the real workload's Deployment and Service, relative
// to the repository root; the real-node demo applies them instead of the
// framework's kwok Deployment.
var workloadManifests = []string{"test/workload/deploy/deployment.yaml", "test/workload/deploy/service.yaml"}

// workloadObjects reads the real workload's objects under root, with image
// as the image of the Deployment's containers.
func workloadObjects(root, image string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, path := range workloadManifests {
		raw, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		obj := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(raw, &obj.Object); err != nil {
			return nil, fmt.Errorf("decode %s: %w", path, err)
		}
		if obj.GetKind() == "Deployment" {
			if err := setImage(obj, image); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

// setImage sets the image of every container of Deployment dep.
func setImage(dep *unstructured.Unstructured, image string) error {
	containers, _, err := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if err != nil {
		return fmt.Errorf("read the containers of deployment %s: %w", dep.GetName(), err)
	}
	if len(containers) == 0 {
		return fmt.Errorf("deployment %s has no containers", dep.GetName())
	}
	for _, c := range containers {
		c.(map[string]any)["image"] = image
	}
	return unstructured.SetNestedSlice(dep.Object, containers, "spec", "template", "spec", "containers")
}
