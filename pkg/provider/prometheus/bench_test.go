package prometheus

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// vectorAnswer is a query answer with one sample per pod, as `sum by (pod) (...)` gives.
func vectorAnswer(pods int) string {
	var b strings.Builder
	b.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
	for i := range pods {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"namespace":"bench","pod":"pod-%05d"},"value":[1700000000.123,"%d.25"]}`, i, i)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// seriesAnswer is a series answer of n series spread over names metric names, each series with
// the same set of label names, as a catch-all discovery sees.
func seriesAnswer(n, names int) string {
	var b strings.Builder
	b.WriteString(`{"status":"success","data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"__name__":"synthetic_metric_%04d","instance":"10.0.%d.%d:8080","job":"exporter","namespace":"ns-%d","pod":"pod-%06d"}`,
			i%names, i/250%250, i%250, i%10, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// cannedServer answers every request with body.
func cannedServer(b *testing.B, body string) *httptest.Server {
	b.Helper()
	raw := []byte(body)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	}))
	b.Cleanup(srv.Close)
	return srv
}

func benchClient(b *testing.B, url string) Client {
	b.Helper()
	o := NewOptions()
	o.URL = url
	cfg, err := o.Config()
	if err != nil {
		b.Fatal(err)
	}
	c, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkQueryDecode is one instant query over loopback HTTP, decoded into a model.Vector.
func BenchmarkQueryDecode(b *testing.B) {
	for _, pods := range []int{100, 10000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			c := benchClient(b, cannedServer(b, vectorAnswer(pods)).URL)
			b.ReportAllocs()
			for b.Loop() {
				vec, err := c.Query(b.Context(), "q", time.Time{})
				if err != nil || len(vec) != pods {
					b.Fatalf("Query() = %d samples, %v", len(vec), err)
				}
			}
		})
	}
}

// BenchmarkQueryLabelsDecode is BenchmarkQueryDecode keeping only the pod label.
func BenchmarkQueryLabelsDecode(b *testing.B) {
	for _, pods := range []int{100, 10000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			c := benchClient(b, cannedServer(b, vectorAnswer(pods)).URL)
			b.ReportAllocs()
			for b.Loop() {
				samples, err := c.QueryLabels(b.Context(), "q", time.Time{}, []string{"pod"})
				if err != nil || len(samples) != pods {
					b.Fatalf("QueryLabels() = %d samples, %v", len(samples), err)
				}
			}
		})
	}
}

// BenchmarkSeriesDecode is one discovery series call over loopback HTTP; retained-bytes/op is
// the live heap the result holds after a GC (what discovery keeps between passes).
func BenchmarkSeriesDecode(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("series=%d", n), func(b *testing.B) {
			c := benchClient(b, cannedServer(b, seriesAnswer(n, 1000)).URL)
			retained := retainedBytes(b, c)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Series(b.Context(), []string{`{__name__=~".+"}`}, time.Time{}, time.Time{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(retained), "retained-B")
		})
	}
}

// retainedBytes is the live heap one Series answer holds, measured before the timed loop.
func retainedBytes(b *testing.B, c Client) uint64 {
	b.Helper()
	before := liveHeap()
	sets, err := c.Series(b.Context(), []string{`{__name__=~".+"}`}, time.Time{}, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	after := liveHeap()
	runtime.KeepAlive(sets)
	if after < before {
		return 0
	}
	return after - before
}

// liveHeap is the heap in use after a full GC.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
