package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/podpilot/podpilot/bench/internal/procstat"
	"github.com/podpilot/podpilot/bench/internal/report"
	"github.com/podpilot/podpilot/test/e2e/framework"
)

const (
	podsNamespace = benchNSPrefix + "pods"
	// podsPerDeployment is the replicas of each Deployment of scenario g.
	podsPerDeployment = 1000
	// rssWindow is how long RSS is sampled, once a second, at each level.
	rssWindow = 30 * time.Second
	// podCreateRate bounds the wait for new pods: kube-controller-manager
	// creates them at its default 20 QPS, kwok then marks them running.
	podCreateRate = 100 * time.Millisecond
)

// PodMemory runs scenario g: podpilot's steady RSS with each of Cfg.Pods
// kwok pods in the cluster, against bench/cmd/podcache (an unstripped typed
// pod informer) and prometheus-adapter (when given) in the same run, and
// the size of a pod as the API server stores and serves it.
func (e *Env) PodMemory(ctx context.Context) (sec report.Section, err error) {
	sec = report.Section{Title: "g. Memory against the number of pods",
		Intro: fmt.Sprintf("Pods in namespace `%s` from Deployments of %d replicas (%s; kwok marks them Running and Ready). Baseline: `bench/cmd/podcache`, a client-go typed "+
			"SharedInformerFactory with the pods informer of all namespaces and no transform, the cache a plain controller keeps. "+
			"At each level, once the API server has the pods and they are ready, and podcache has printed that it caches every pod "+
			"in the cluster, the bench waits 2 relist intervals (%s) and then samples /proc/<pid>/status VmRSS every second for %s: "+
			"median (steady state) / max. Growth is the median's growth from the level before any pod existed. Pod size: body bytes "+
			"of `GET /api/v1/namespaces/%s/pods?limit=500` as `application/vnd.kubernetes.protobuf` (the encoding etcd stores) "+
			"and as JSON, divided by the items.", podsNamespace, podsPerDeployment, podShapeText(e.Cfg.PodShape), 2*e.Cfg.RelistInterval, rssWindow, podsNamespace)}
	pc, err := e.startPodcache()
	if err != nil {
		return sec, err
	}
	defer pc.Stop()
	var adapter *framework.Podpilot
	if e.Cfg.Adapter != "" {
		if adapter, err = e.startAdapter(ctx); err != nil {
			return sec, fmt.Errorf("prometheus-adapter: %w", err)
		}
		defer adapter.Stop()
	} else {
		sec.Notes = append(sec.Notes, "prometheus-adapter: skipped (PROMETHEUS_ADAPTER not set).")
	}
	if err := e.ensureNamespaces(ctx, podsNamespace); err != nil {
		return sec, err
	}
	defer func() {
		if cerr := e.deletePodsNamespace(ctx); cerr != nil {
			sec.Notes = append(sec.Notes, "cleanup: "+cerr.Error())
		}
	}()
	var levels []podLevel
	defer func() { // the levels measured so far, also when a later one failed
		sec.Tables = append(sec.Tables, podTable(levels, adapter != nil))
		sec.Headline = podHeadline(levels, adapter != nil)
		sec.Notes = append(sec.Notes, podNotes(levels, adapter != nil)...)
	}()
	targets := e.Cfg.Pods
	if len(targets) == 0 || targets[0] != 0 {
		targets = append([]int{0}, targets...)
	}
	for _, n := range targets {
		e.logf("g: %d pods", n)
		start := time.Now()
		if err := e.scalePods(ctx, n); err != nil {
			return sec, err
		}
		l, err := e.measurePods(ctx, n, pc, adapter)
		if err != nil {
			return sec, err
		}
		levels = append(levels, l)
		e.logf("g: %d pods measured after %s: podpilot %.1f MiB, podcache %.1f MiB, adapter %.1f MiB",
			n, time.Since(start).Round(time.Second), l.podpilot.median, l.baseline.median, l.adapter.median)
	}
	return sec, nil
}

// podDeployment names the i-th Deployment of scenario g.
func podDeployment(i int) string { return fmt.Sprintf("pods-%03d", i) }

// scalePods makes the namespace hold n pods (Deployments of
// podsPerDeployment, the last one partial) and waits until the API server
// has exactly n and all are ready.
func (e *Env) scalePods(ctx context.Context, n int) error {
	have, err := e.countPods(ctx, podsNamespace)
	if err != nil {
		return err
	}
	for i := 0; i*podsPerDeployment < n; i++ {
		want := int32(min(podsPerDeployment, n-i*podsPerDeployment))
		d := e.Cluster.Deployment(podDeployment(i), want)
		shapePodTemplate(&d.Spec.Template, d.Name, e.Cfg.PodShape)
		_, err := e.Cluster.Client.AppsV1().Deployments(podsNamespace).Create(ctx, d, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = e.scaleOne(ctx, workload{ns: podsNamespace, name: d.Name}, want)
		}
		if err != nil {
			return fmt.Errorf("create deployment %s/%s: %w", podsNamespace, d.Name, err)
		}
	}
	timeout := 2*time.Minute + time.Duration(max(n-have, 0))*podCreateRate
	lastLog := time.Now()
	return framework.PollEvery(ctx, 2*time.Second, timeout, fmt.Sprintf("%d ready pods in %s", n, podsNamespace),
		func(ctx context.Context) (bool, string, error) {
			count, err := e.countPods(ctx, podsNamespace)
			if err != nil {
				return false, "", err
			}
			ready, err := e.readyReplicas(ctx, podsNamespace)
			if err != nil {
				return false, "", err
			}
			state := fmt.Sprintf("%d pods, %d ready", count, ready)
			if time.Since(lastLog) > 30*time.Second {
				e.logf("g: waiting for %d pods: %s", n, state)
				lastLog = time.Now()
			}
			return count == n && ready == n, state, nil
		})
}

// countPods returns the pods in ns ("" for all namespaces) from a LIST of
// one item and its remainingItemCount.
func (e *Env) countPods(ctx context.Context, ns string) (int, error) {
	l, err := e.Cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, fmt.Errorf("count pods in %q: %w", ns, err)
	}
	n := len(l.Items)
	if l.RemainingItemCount != nil {
		n += int(*l.RemainingItemCount)
	}
	return n, nil
}

// readyReplicas sums the Deployments' status.readyReplicas in ns.
func (e *Env) readyReplicas(ctx context.Context, ns string) (int, error) {
	l, err := e.Cluster.Client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("list deployments in %s: %w", ns, err)
	}
	n := 0
	for _, d := range l.Items {
		n += int(d.Status.ReadyReplicas)
	}
	return n, nil
}

// measurePods waits until podcache holds every pod of the cluster plus two
// relist intervals, then samples the three processes' RSS.
func (e *Env) measurePods(ctx context.Context, n int, pc *podcache, adapter *framework.Podpilot) (podLevel, error) {
	l := podLevel{pods: n}
	err := framework.PollEvery(ctx, time.Second, 3*time.Minute, fmt.Sprintf("podcache caching every pod (%d in %s)", n, podsNamespace),
		func(ctx context.Context) (bool, string, error) {
			if pc.Exited() {
				return false, "", errors.New("podcache exited; see its log in the cluster's logs")
			}
			total, err := e.countPods(ctx, "")
			if err != nil {
				return false, "", err
			}
			return pc.Synced() == total, fmt.Sprintf("podcache reports %d pods, the API server has %d", pc.Synced(), total), nil
		})
	if err != nil {
		return l, err
	}
	if err := sleep(ctx, 2*e.Cfg.RelistInterval); err != nil {
		return l, err
	}
	pids := map[*rssSample]int{&l.baseline: pc.Pid()}
	if pid, err := e.Pid(e.Podpilot); err == nil {
		pids[&l.podpilot] = pid
	}
	if adapter != nil {
		if pid, err := e.Pid(adapter); err == nil {
			pids[&l.adapter] = pid
		}
	}
	if err := sampleRSS(ctx, pids, rssWindow); err != nil {
		return l, err
	}
	if n > 0 {
		if l.protoPerPod, err = e.bytesPerPod(ctx, "application/vnd.kubernetes.protobuf"); err != nil {
			return l, err
		}
		if l.jsonPerPod, err = e.bytesPerPod(ctx, "application/json"); err != nil {
			return l, err
		}
	}
	return l, nil
}

// sampleRSS reads each pid's VmRSS every second for d and stores the
// median and max in MiB.
func sampleRSS(ctx context.Context, pids map[*rssSample]int, d time.Duration) error {
	samples := map[*rssSample][]float64{}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); {
		for s, pid := range pids {
			if rss, err := procstat.RSS(pid); err == nil {
				samples[s] = append(samples[s], float64(rss)/(1<<20))
			}
		}
		if err := sleep(ctx, time.Second); err != nil {
			return err
		}
	}
	for s, v := range samples {
		*s = summarizeRSS(v)
	}
	return nil
}

// bytesPerPod LISTs up to 500 pods of the namespace in the given encoding
// and returns the body's bytes per item.
func (e *Env) bytesPerPod(ctx context.Context, accept string) (float64, error) {
	hc, err := restHTTPClient(e.Cluster.Config)
	if err != nil {
		return 0, err
	}
	url := e.Cluster.Config.Host + "/api/v1/namespaces/" + podsNamespace + "/pods?limit=500"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", accept)
	body, err := doGet(hc, req)
	if err != nil {
		return 0, err
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, nil)
	if err != nil {
		return 0, fmt.Errorf("decode %s pod list: %w", accept, err)
	}
	list, ok := obj.(*corev1.PodList)
	if !ok || len(list.Items) == 0 {
		return 0, fmt.Errorf("%s pod list: got %T with no pods", accept, obj)
	}
	return float64(len(body)) / float64(len(list.Items)), nil
}

// deletePodsNamespace deletes scenario g's namespace (its Deployments and
// pods with it) and waits, bounded, until it is gone.
func (e *Env) deletePodsNamespace(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	e.logf("g: deleting namespace %s", podsNamespace)
	err := e.Cluster.Client.CoreV1().Namespaces().Delete(ctx, podsNamespace, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", podsNamespace, err)
	}
	return framework.PollEvery(ctx, 2*time.Second, 3*time.Minute, "namespace "+podsNamespace+" gone",
		func(ctx context.Context) (bool, string, error) {
			_, err := e.Cluster.Client.CoreV1().Namespaces().Get(ctx, podsNamespace, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, "", nil
			}
			n, cerr := e.countPods(ctx, podsNamespace)
			return false, fmt.Sprintf("%d pods left", n), errors.Join(err, cerr)
		})
}

// doGet sends req and returns the body of a 200 answer.
func doGet(hc *http.Client, req *http.Request) ([]byte, error) {
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", req.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("get %s: status %d: %.200s", req.URL, resp.StatusCode, b)
	}
	return b, nil
}
