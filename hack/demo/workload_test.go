package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/podpilot/podpilot/test/e2e/framework"
)

func TestWorkloadObjectsCarryTheImageAndTheLabelTheDemoReads(t *testing.T) {
	const image = "podpilot.local/vg1-vanguard:v1.2.3"
	objs, err := workloadObjects(framework.RepoRoot(), image)
	if err != nil {
		t.Fatal(err)
	}
	type obj struct{ Kind, Name, App string }
	var got []obj
	for _, o := range objs {
		got = append(got, obj{o.GetKind(), o.GetName(), o.GetLabels()["app"]})
	}
	want := []obj{{"Deployment", workload, workload}, {"Service", workload, workload}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("objects (-want +got):\n%s", diff)
	}
	containers, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "template", "spec", "containers")
	for _, c := range containers {
		if img := c.(map[string]any)["image"]; img != image {
			t.Errorf("container image = %v, want %s", img, image)
		}
	}
	// servedSelector (app=vg1-vanguard) must select the Deployment's pods.
	if app, _, _ := unstructured.NestedString(objs[0].Object, "spec", "template", "metadata", "labels", "app"); app != workload {
		t.Errorf("pod label app = %q, want %q (servedSelector reads it)", app, workload)
	}
}

func TestNodeLoadSendsTheProfileFromTheFirstOfferUntilStopped(t *testing.T) {
	var queries atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		queries.Add(int64(n))
	}))
	defer srv.Close()
	l, err := newNodeLoad(srv.URL + "/query")
	if err != nil {
		t.Fatal(err)
	}
	l.stop() // stopping before the first offer is a no-op
	if got := queries.Load(); got != 0 {
		t.Fatalf("%d queries were sent before the first offer", got)
	}
	// The ramp offers 100·t² queries by t seconds: the first batch of 50 is
	// due after about 0.7s.
	l.offer(t.Context(), 0)
	l.offer(t.Context(), 0) // a second offer does not start a second generator
	err = wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return l.counts().Answered > 0, nil
	})
	l.stop()
	if err != nil {
		t.Fatalf("nothing was answered: %v", err)
	}
	c := l.counts()
	if c.Answered == 0 || queries.Load() != c.Answered*50 {
		t.Errorf("after the first offer: %+v, server counted %d queries; want answered batches of 50", c, queries.Load())
	}
}
