package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// fieldManager is the server-side apply manager of objects tests apply.
const fieldManager = "podpilot-e2e"

// CreateNamespace creates a namespace with a generated name starting with
// prefix, deleted when the test ends.
func (c *Cluster) CreateNamespace(ctx context.Context, t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + rand.String(5)}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", ns.Name, err)
	}
	t.Cleanup(func() {
		err := c.Client.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), ns.Name, metav1.DeleteOptions{})
		if err != nil {
			t.Logf("delete namespace %s: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// Apply server-side applies every object in the YAML or JSON stream doc,
// into namespace ns where an object is namespaced and names none.
func (c *Cluster) Apply(ctx context.Context, t testing.TB, ns string, doc []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := c.apply(ctx, ns, doc, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// ApplyErr is Apply returning the API server's error instead of failing, for
// tests that expect a rejection. dryRun applies with server-side dry-run.
func (c *Cluster) ApplyErr(ctx context.Context, ns string, doc []byte, dryRun bool) ([]*unstructured.Unstructured, error) {
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.apply(ctx, ns, doc, opts)
}

func (c *Cluster) apply(ctx context.Context, ns string, doc []byte, opts metav1.ApplyOptions) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("decode YAML: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		applied, err := c.applyOne(ctx, ns, obj, opts)
		if err != nil {
			return out, err
		}
		out = append(out, applied)
	}
}

func (c *Cluster) applyOne(ctx context.Context, ns string, obj *unstructured.Unstructured, opts metav1.ApplyOptions) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		c.Mapper.Reset()
		if mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("map %s: %w", gvk, err)
		}
	}
	ri := c.Dynamic.Resource(mapping.Resource)
	var applied *unstructured.Unstructured
	if mapping.Scope.Name() == "namespace" {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
		}
		applied, err = ri.Namespace(obj.GetNamespace()).Apply(ctx, obj.GetName(), obj, opts)
	} else {
		applied, err = ri.Apply(ctx, obj.GetName(), obj, opts)
	}
	if err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", gvk.Kind, obj.GetName(), err)
	}
	return applied, nil
}
