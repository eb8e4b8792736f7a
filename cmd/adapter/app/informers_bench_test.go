package app

import (
	"encoding/json"
	"runtime"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// benchPodJSON is a typical Deployment pod as kwok-managed clusters store it (managedFields,
// annotations, env, volumes, probes, four conditions, a container status with the resources a
// kubelet reports since in-place resize is GA); IDX makes each
// object's name, uid and resource version unique.
const benchPodJSON = `{"metadata":{"name":"vg1-vanguard-7d9f8c6b5-IDX","generateName":"vg1-vanguard-7d9f8c6b5-","namespace":"dns","uid":"6f1c2d3e-4a5b-6c7d-8e9f-IDX","resourceVersion":"IDX123","creationTimestamp":"2026-11-23T06:00:00Z",
"labels":{"app":"vg1-vanguard","tier":"dns","pod-template-hash":"7d9f8c6b5"},
"annotations":{"prometheus.io/scrape":"true","prometheus.io/port":"9090","example.com/owner":"team-dns@example.com"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"vg1-vanguard-7d9f8c6b5","uid":"1a2b3c4d-5e6f-7a8b-9c0d-e1f2a3b4c5d6","controller":true,"blockOwnerDeletion":true}],
"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-23T06:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{},"f:tier":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"1a2b\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{},"f:image":{},"f:name":{},"f:ports":{},"f:resources":{}}}}}},
{"manager":"kwok","operation":"Update","apiVersion":"v1","time":"2026-11-23T06:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}},"subresource":"status"}]},
"spec":{"nodeName":"kwok-node-0","restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","schedulerName":"default-scheduler",
"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],
"volumes":[{"name":"config","configMap":{"name":"vanguard-config","defaultMode":420}},{"name":"kube-api-access-abcde","projected":{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}}],"defaultMode":420}}],
"containers":[{"name":"app","image":"registry.example.com/team/vanguard:1.42.0","ports":[{"name":"http","containerPort":8080,"protocol":"TCP"},{"name":"metrics","containerPort":9090,"protocol":"TCP"}],
"env":[{"name":"VAR_0","value":"value-0-of-a-typical-configuration"},{"name":"VAR_1","value":"value-1-of-a-typical-configuration"},{"name":"VAR_2","value":"value-2-of-a-typical-configuration"},{"name":"VAR_3","value":"value-3-of-a-typical-configuration"}],
"resources":{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"memory":"512Mi"}},"volumeMounts":[{"name":"config","mountPath":"/etc/vanguard"},{"name":"kube-api-access-abcde","readOnly":true,"mountPath":"/var/run/secrets/kubernetes.io/serviceaccount"}],
"readinessProbe":{"httpGet":{"path":"/ready","port":8080,"scheme":"HTTP"},"timeoutSeconds":1,"periodSeconds":10,"successThreshold":1,"failureThreshold":3},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}]},
"status":{"phase":"Running","hostIP":"10.0.0.1","podIP":"10.0.0.IDX","startTime":"2026-11-23T06:00:01Z",
"conditions":[{"type":"Initialized","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"},{"type":"Ready","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"},{"type":"ContainersReady","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"},{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"}],
"containerStatuses":[{"name":"app","state":{"running":{"startedAt":"2026-11-23T06:00:01Z"}},"ready":true,"restartCount":0,"image":"registry.example.com/team/vanguard:1.42.0","imageID":"","started":true,
"allocatedResources":{"cpu":"100m","memory":"256Mi"},"resources":{"requests":{"cpu":"100m","memory":"256Mi"},"limits":{"memory":"512Mi"}}}]}}`

// benchMinimalPodJSON is scenario g's minimal pod: one container with requests, an app label,
// the fields the API server and kube-controller-manager add, kwok's status.
const benchMinimalPodJSON = `{"metadata":{"name":"pods-000-7d9f8c6b5-IDX","generateName":"pods-000-7d9f8c6b5-","namespace":"bench-pods","uid":"6f1c2d3e-4a5b-6c7d-8e9f-IDX","resourceVersion":"IDX123","creationTimestamp":"2026-11-23T06:00:00Z",
"labels":{"app":"pods-000","pod-template-hash":"7d9f8c6b5"},
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"pods-000-7d9f8c6b5","uid":"1a2b3c4d-5e6f-7a8b-9c0d-e1f2a3b4c5d6","controller":true,"blockOwnerDeletion":true}],
"managedFields":[{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2026-11-23T06:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"1a2b\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"f:resources":{}}}}}},
{"manager":"kwok","operation":"Update","apiVersion":"v1","time":"2026-11-23T06:00:01Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:startTime":{}}},"subresource":"status"}]},
"spec":{"nodeName":"kwok-node-0","restartPolicy":"Always","terminationGracePeriodSeconds":0,"dnsPolicy":"ClusterFirst","serviceAccountName":"default","schedulerName":"default-scheduler",
"containers":[{"name":"app","image":"registry.invalid/podpilot/fake:1","resources":{"requests":{"cpu":"100m","memory":"128Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}]},
"status":{"phase":"Running","hostIP":"10.0.0.1","podIP":"10.0.0.IDX","startTime":"2026-11-23T06:00:01Z",
"conditions":[{"type":"Initialized","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"},{"type":"Ready","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"},{"type":"ContainersReady","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"},{"type":"PodScheduled","status":"True","lastTransitionTime":"2026-11-23T06:00:01Z"}],
"containerStatuses":[{"name":"app","state":{"running":{"startedAt":"2026-11-23T06:00:01Z"}},"ready":true,"restartCount":0,"image":"registry.invalid/podpilot/fake:1","imageID":"","started":true}]}}`

// heapInUse returns the live heap after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// cachedBytesPerPod decodes n pods (each from its own JSON, like a watch does), stores what
// conv makes of them in an informer's indexer, and returns the live heap they add per pod.
func cachedBytesPerPod(b *testing.B, podJSON string, n int, conv func(*corev1.Pod) any) float64 {
	b.Helper()
	before := heapInUse()
	store := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for i := range n {
		var p corev1.Pod
		if err := json.Unmarshal([]byte(strings.ReplaceAll(podJSON, "IDX", strconv.Itoa(i))), &p); err != nil {
			b.Fatal(err)
		}
		if err := store.Add(conv(&p)); err != nil {
			b.Fatal(err)
		}
	}
	after := heapInUse()
	runtime.KeepAlive(store)
	return float64(after-before) / float64(n)
}

// BenchmarkPodCacheMemory reports, for a realistic and a minimal pod, the live heap per cached
// pod of the shared pod cache (compact *podcache.Pod) and, as ratios measured in the same run,
// against the unstripped typed informer (issue 10's baseline; target <= 0.25) and against what
// podpilot cached before one cache (an unstripped typed informer plus an unstripped metadata
// informer).
func BenchmarkPodCacheMemory(b *testing.B) {
	const n = 10000
	for _, shape := range []struct{ name, json string }{{"realistic", benchPodJSON}, {"minimal", benchMinimalPodJSON}} {
		b.Run(shape.name, func(b *testing.B) {
			for b.Loop() {
				c := &clusterInformers{}
				unstripped := cachedBytesPerPod(b, shape.json, n, func(p *corev1.Pod) any { return p })
				metadata := cachedBytesPerPod(b, shape.json, n, func(p *corev1.Pod) any {
					return &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: p.ObjectMeta}
				})
				compact := cachedBytesPerPod(b, shape.json, n, func(p *corev1.Pod) any { return c.pods.Compact(p) })
				b.ReportMetric(unstripped, "unstripped-B/pod")
				b.ReportMetric(compact, "compact-B/pod")
				b.ReportMetric(compact/unstripped, "ratio-vs-typed")
				b.ReportMetric(compact/(unstripped+metadata), "ratio-vs-before")
			}
		})
	}
}
