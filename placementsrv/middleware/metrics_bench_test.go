package middleware

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkRequestMetrics is the instrumentation alone, per request: the
// in-flight gauge, the counter and the histogram, with the route known.
func BenchmarkRequestMetrics(b *testing.B) {
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	c := New(Options{Metrics: m}, nil)
	const node = "11111111-1111-4111-8111-111111111111"
	req := &Request{Request: httptest.NewRequest(http.MethodGet, "/resource_providers/"+node, nil),
		Route: "/resource_providers/{uuid}", Params: map[string]string{"uuid": node}}
	b.ReportAllocs()
	for b.Loop() {
		c.requestStarted()
		c.requestDone(req, http.StatusOK, 1000)
	}
}
