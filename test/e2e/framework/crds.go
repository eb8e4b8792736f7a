package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs applies podpilot's CRDs from manifests/crd and the
// podpilot-system namespace, and waits until the CRDs are Established.
func (c *Cluster) InstallCRDs(ctx context.Context) error {
	files, err := filepath.Glob(filepath.Join(RepoRoot(), "manifests", "crd", "*_*.yaml"))
	if err != nil {
		return fmt.Errorf("find CRD manifests: %w", err)
	}
	if len(files) == 0 {
		return errors.New("find CRD manifests: no files in manifests/crd")
	}
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	ns := []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + apiServiceNamespace + "}\n")
	if _, err := c.apply(ctx, "", ns, opts); err != nil {
		return err
	}
	for _, f := range files {
		doc, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		objs, err := c.apply(ctx, "", doc, opts)
		if err != nil {
			return err
		}
		for _, o := range objs {
			name := o.GetName()
			err := Poll(ctx, time.Minute, "CRD "+name+" Established", func(ctx context.Context) (bool, string, error) {
				u, err := c.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return false, "", err
				}
				return crdEstablished(u), "not established yet", nil
			})
			if err != nil {
				return err
			}
		}
	}
	c.Mapper.Reset()
	return nil
}

func crdEstablished(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, raw := range conds {
		cond, _ := raw.(map[string]any)
		if cond["type"] == "Established" && cond["status"] == "True" {
			return true
		}
	}
	return false
}
