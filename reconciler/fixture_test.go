package reconciler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementclient"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// novaDouble is a stand-in for Nova's compute API serving
// GET /os-aggregates and GET /os-hypervisors/detail in upstream's shapes
// at microversion 2.53. Tests change its state between runs.
type novaDouble struct {
	URL string

	mu          sync.Mutex
	aggregates  []novaclient.Aggregate
	hypervisors []novaclient.ComputeNode
	// services are the nova-compute hosts of GET /os-services; nil lists
	// the service host of each hypervisor, as Nova would.
	services []doubleService
	down     bool
	requests int
}

func newNovaDouble(t testing.TB) *novaDouble {
	d := &novaDouble{}
	hs := httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(hs.Close)
	d.URL = hs.URL
	return d
}

func (d *novaDouble) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.requests++
	if d.down {
		http.Error(w, "nova is down (double)", http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("X-Auth-Token") == "" {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	if got := r.Header.Get("OpenStack-API-Version"); got != "compute "+novaclient.Microversion {
		http.Error(w, "double wants microversion "+novaclient.Microversion+", got "+got, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/os-aggregates":
		aggs := make([]map[string]any, len(d.aggregates))
		for i, a := range d.aggregates {
			aggs[i] = map[string]any{"id": i + 1, "uuid": a.UUID, "name": a.Name, "hosts": a.Hosts,
				"availability_zone": nil, "metadata": map[string]any{}, "deleted": false,
				"created_at": "2026-01-01T00:00:00.000000", "updated_at": nil, "deleted_at": nil}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"aggregates": aggs})
	case "/os-hypervisors/detail":
		hvs := make([]map[string]any, len(d.hypervisors))
		for i, h := range d.hypervisors {
			hvs[i] = map[string]any{"id": h.UUID, "hypervisor_hostname": h.Hostname, "state": "up", "status": "enabled",
				"hypervisor_type": "QEMU", "hypervisor_version": 8002000, "host_ip": "192.0.2.1",
				"service": map[string]any{"host": h.Host, "id": fmt.Sprintf("svc-%d", i), "disabled_reason": nil}}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"hypervisors": hvs})
	case "/os-services":
		_ = json.NewEncoder(w).Encode(map[string]any{"services": d.servicesJSON(r.URL.Query().Get("binary"))})
	default:
		http.NotFound(w, r)
	}
}

// servicesJSON is the os-services answer: full entries in upstream's
// shape, filtered by binary as Nova filters them.
func (d *novaDouble) servicesJSON(binary string) []map[string]any {
	svcs := d.services
	if svcs == nil {
		for _, h := range d.hypervisors {
			if !slices.ContainsFunc(svcs, func(s doubleService) bool { return s.Host == h.Host }) {
				svcs = append(svcs, doubleService{Host: h.Host, Binary: ComputeBinary})
			}
		}
	}
	out := []map[string]any{}
	for i, s := range svcs {
		if binary != "" && s.Binary != binary {
			continue
		}
		out = append(out, map[string]any{"id": fmt.Sprintf("0000000%d-1111-4111-8111-000000000000", i), "binary": s.Binary, "host": s.Host,
			"zone": "nova", "status": "enabled", "state": "up", "forced_down": s.ForcedDown, "disabled_reason": nil,
			"updated_at": "2026-01-01T00:00:00.000000"})
	}
	return out
}

// setServices replaces the os-services list (nil: one per hypervisor host).
func (d *novaDouble) setServices(svcs []doubleService) {
	d.mu.Lock()
	d.services = svcs
	d.mu.Unlock()
}

// set replaces Nova's state.
func (d *novaDouble) set(aggs []novaclient.Aggregate, nodes []novaclient.ComputeNode) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aggregates = d.aggregates[:0]
	for _, a := range aggs {
		d.aggregates = append(d.aggregates, novaclient.Aggregate{UUID: a.UUID, Name: a.Name, Hosts: slices.Clone(a.Hosts)})
	}
	d.hypervisors = slices.Clone(nodes)
}

// doubleService is one entry of the double's GET /os-services.
type doubleService struct {
	Host, Binary string
	ForcedDown   bool
}

func (d *novaDouble) setDown(down bool) {
	d.mu.Lock()
	d.down = down
	d.mu.Unlock()
}

// source is a novaclient.API client of the double, as cmd builds it.
func (d *novaDouble) source() *novaclient.API {
	pc := &gophercloud.ProviderClient{}
	pc.SetToken("nova-admin")
	return novaclient.NewAPI(&gophercloud.ServiceClient{ProviderClient: pc, Endpoint: gophercloud.NormalizeURL(d.URL)})
}

// env is one Placement server (ours or the reference) behind a counting
// proxy, and a client of the proxy.
type env struct {
	srv    *placementtest.Server
	proxy  *placementtest.Proxy
	pl     Placement
	nova   *novaDouble
	client *placementclient.Client
}

func newEnv(t testing.TB, kind string) *env {
	t.Helper()
	srv := placementtest.Start(t, kind)
	proxy := placementtest.NewProxy(t, srv.URL)
	c, err := placementclient.New(context.Background(), placementclient.Options{Endpoint: proxy.URL, Token: srv.Token})
	if err != nil {
		t.Fatal(err)
	}
	return &env{srv: srv, proxy: proxy, pl: FromClient(c), nova: newNovaDouble(t), client: c}
}

// provider creates a provider directly on the server (not through the
// proxy) with the given traits, returning its uuid.
func (e *env) provider(t testing.TB, uuid, name, parent string, traits ...string) {
	t.Helper()
	body := map[string]any{"uuid": uuid, "name": name}
	if parent != "" {
		body["parent_provider_uuid"] = parent
	}
	e.srv.MustDo(t, 200, "POST", "/resource_providers", "1.39", body)
	if len(traits) > 0 {
		e.srv.MustDo(t, 200, "PUT", "/resource_providers/"+uuid+"/traits", "1.39",
			map[string]any{"resource_provider_generation": 0, "traits": traits})
	}
}

// aggregates reads a provider's aggregates directly, sorted.
func (e *env) aggregates(t testing.TB, uuid string) []string {
	t.Helper()
	var doc struct {
		Aggregates []string `json:"aggregates"`
		Generation int      `json:"resource_provider_generation"`
	}
	if err := json.Unmarshal(e.srv.MustDo(t, 200, "GET", "/resource_providers/"+uuid+"/aggregates", "1.39", nil), &doc); err != nil {
		t.Fatal(err)
	}
	slices.Sort(doc.Aggregates)
	return doc.Aggregates
}

// setAggregates writes a provider's aggregates directly, as an operator.
func (e *env) setAggregates(t testing.TB, uuid string, aggs ...string) {
	t.Helper()
	var doc struct {
		Generation int `json:"resource_provider_generation"`
	}
	if err := json.Unmarshal(e.srv.MustDo(t, 200, "GET", "/resource_providers/"+uuid+"/aggregates", "1.39", nil), &doc); err != nil {
		t.Fatal(err)
	}
	e.srv.MustDo(t, 200, "PUT", "/resource_providers/"+uuid+"/aggregates", "1.39",
		map[string]any{"resource_provider_generation": doc.Generation, "aggregates": append([]string{}, aggs...)})
}

// traits reads a provider's traits directly.
func (e *env) traits(t testing.TB, uuid string) []string {
	t.Helper()
	_, tr := e.srv.Traits(t, uuid)
	return tr
}

func uuidN(prefix string, n int) string {
	return fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, n)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
