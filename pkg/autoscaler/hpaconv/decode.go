package hpaconv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// ErrNotAnHPA means a YAML document is neither an autoscaling/v2 HorizontalPodAutoscaler nor a
// List of them.
var ErrNotAnHPA = errors.New("not an autoscaling/v2 HorizontalPodAutoscaler")

// typeMeta is what Decode reads first of each document.
type typeMeta struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// Decode returns the HPAs of data: YAML or JSON documents, each an autoscaling/v2
// HorizontalPodAutoscaler or a List of them (as `kubectl get hpa -o yaml` prints). A field
// autoscaling/v2 does not have is an error, not dropped: it could change what the HPA does.
// name says where data comes from, for the errors.
func Decode(name string, data []byte) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*autoscalingv2.HorizontalPodAutoscaler
	for doc := 0; ; doc++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
			continue
		}
		hpas, err := decodeDocument(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, doc, err)
		}
		out = append(out, hpas...)
	}
}

func decodeDocument(raw json.RawMessage) ([]*autoscalingv2.HorizontalPodAutoscaler, error) {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, fmt.Errorf("read apiVersion and kind: %w", err)
	}
	switch {
	case tm.Kind == "List" || tm.Kind == "HorizontalPodAutoscalerList":
		var out []*autoscalingv2.HorizontalPodAutoscaler
		for i, item := range tm.Items {
			h, err := decodeDocument(item)
			if err != nil {
				return nil, fmt.Errorf("items[%d]: %w", i, err)
			}
			out = append(out, h...)
		}
		return out, nil
	case tm.APIVersion == "autoscaling/v2" && tm.Kind == "HorizontalPodAutoscaler":
		var h autoscalingv2.HorizontalPodAutoscaler
		if err := yaml.UnmarshalStrict(raw, &h); err != nil {
			return nil, fmt.Errorf("HorizontalPodAutoscaler: %w", err)
		}
		return []*autoscalingv2.HorizontalPodAutoscaler{&h}, nil
	}
	return nil, fmt.Errorf("%s %s: %w (read autoscaling/v1 ones with kubectl get hpa -o yaml, which prints v2)", tm.APIVersion, tm.Kind, ErrNotAnHPA)
}
