package v1alpha1

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// DefaultMinReplicas is minReplicas when the spec leaves it unset; the CRD
// schema applies the same default at admission.
const DefaultMinReplicas int32 = 1

// ErrUnsupportedScaleTargetKind is returned for a scaleTargetKind other
// than deployment or statefulset.
var ErrUnsupportedScaleTargetKind = errors.New("unsupported scale target kind")

// Canonical returns k in lower case, the form the constants use.
func (k ScaleTargetKind) Canonical() ScaleTargetKind {
	return ScaleTargetKind(strings.ToLower(string(k)))
}

// GroupKind returns the apps/v1 group and kind that k names.
func (k ScaleTargetKind) GroupKind() (schema.GroupKind, error) {
	switch k.Canonical() {
	case ScaleTargetDeployment:
		return schema.GroupKind{Group: "apps", Kind: "Deployment"}, nil
	case ScaleTargetStatefulSet:
		return schema.GroupKind{Group: "apps", Kind: "StatefulSet"}, nil
	}
	return schema.GroupKind{}, fmt.Errorf("%q: %w", string(k), ErrUnsupportedScaleTargetKind)
}

// GroupResource returns the apps/v1 group and resource that k names, for
// the scale subresource.
func (k ScaleTargetKind) GroupResource() (schema.GroupResource, error) {
	gk, err := k.GroupKind()
	if err != nil {
		return schema.GroupResource{}, err
	}
	return schema.GroupResource{Group: gk.Group, Resource: strings.ToLower(gk.Kind) + "s"}, nil
}

// MinReplicasOrDefault returns spec.minReplicas, or DefaultMinReplicas when unset.
func (s *PodAutoscalerSpec) MinReplicasOrDefault() int32 {
	if s.MinReplicas == nil {
		return DefaultMinReplicas
	}
	return *s.MinReplicas
}

// TargetReference returns "Kind/name" of pa's scale target, the form of
// status.reference, e.g. Deployment/vg1-vanguard.
func (pa *PodAutoscaler) TargetReference() (string, error) {
	gk, err := pa.Spec.ScaleTargetKind.GroupKind()
	if err != nil {
		return "", fmt.Errorf("scale target of %s/%s: %w", pa.Namespace, pa.Name, err)
	}
	return gk.Kind + "/" + pa.Spec.ScaleTargetName, nil
}
