package placementsrv

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
)

// BenchmarkHotHandler measures what request metrics cost on the cheapest
// hot handler (a provider read answered from memory) and on the
// allocation candidates query a scheduler makes for every boot, with the
// whole middleware chain but no network. metrics=off removes the
// instrumentation entirely; compare with
//
//	go test -run='^$' -bench=HotHandler -count=10 ./placementsrv | benchstat -col /metrics -
func BenchmarkHotHandler(b *testing.B) {
	routes := []struct{ name, path string }{
		{"GET_provider", "/resource_providers/" + metricsNode1},
		{"GET_allocation_candidates", "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512"},
	}
	for _, rt := range routes {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("route=%s/metrics=%s", rt.name, map[bool]string{false: "off", true: "on"}[on]), func(b *testing.B) {
				h := benchServer(b, on)
				req := httptest.NewRequest(http.MethodGet, rt.path, nil)
				req.Header.Set("X-Auth-Token", "admin")
				req.Header.Set("OpenStack-API-Version", "placement 1.39")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", rt.path, rec.Code, rec.Body)
				}
				b.ReportAllocs()
				for b.Loop() {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
				}
			})
		}
	}
}

// benchServer is a server over a fresh store with 100 compute providers,
// instrumented or not.
func benchServer(b *testing.B, instrumented bool) http.Handler {
	b.Helper()
	st, err := dbstore.OpenFile(context.Background(), filepath.Join(b.TempDir(), "p.db"), dbstore.Options{Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	srv, err := New(Options{Store: st, Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	if !instrumented {
		srv.mw.Metrics = nil
	}
	h := srv.Handler()
	do := func(method, path, body string) {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("X-Auth-Token", "admin")
		req.Header.Set("OpenStack-API-Version", "placement 1.39")
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	for i := range 100 {
		uuid := fmt.Sprintf("%08d-1111-4111-8111-111111111111", i)
		if i == 0 {
			uuid = metricsNode1
		}
		do("POST", "/resource_providers", fmt.Sprintf(`{"name": "compute-%d", "uuid": %q}`, i, uuid))
		do("PUT", "/resource_providers/"+uuid+"/inventories", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 64}, "MEMORY_MB": {"total": 262144}}}`)
	}
	return h
}
