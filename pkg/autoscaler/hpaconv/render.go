package hpaconv

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"

	podpilotv1alpha1 "github.com/podpilot/podpilot/pkg/apis/autoscaling/v1alpha1"
)

// YAML returns pa as the YAML to commit or apply: apiVersion, kind, metadata and spec, without
// the empty status and creationTimestamp that encoding the Go type adds.
func YAML(pa *podpilotv1alpha1.PodAutoscaler) ([]byte, error) {
	data, err := json.Marshal(pa)
	if err != nil {
		return nil, fmt.Errorf("encode PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("decode PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	delete(obj, "status")
	if meta, ok := obj["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("render PodAutoscaler %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	return out, nil
}
