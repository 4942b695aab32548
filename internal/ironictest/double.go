// Package ironictest has IronicDouble, an httptest stand-in for the
// Ironic API's GET /v1/nodes/detail, for driver and agent tests.
package ironictest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// Node is the part of an Ironic node the driver reads.
type Node struct {
	UUID           string
	ResourceClass  string
	ProvisionState string
	PowerState     string // "" is reported as null
	Maintenance    bool
	InstanceUUID   string // "" is reported as null
	Traits         []string
	ConductorGroup string
}

// IronicDouble serves nodes as Ironic's API does at microversion >= 1.46.
type IronicDouble struct {
	URL string // endpoint including /v1

	mu    sync.Mutex
	nodes []Node
	down  bool
}

// NewIronicDouble starts a double; it stops at cleanup.
func NewIronicDouble(t testing.TB, nodes ...Node) *IronicDouble {
	t.Helper()
	d := &IronicDouble{nodes: slices.Clone(nodes)}
	hs := httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(hs.Close)
	d.URL = hs.URL + "/v1"
	return d
}

func (d *IronicDouble) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	down := d.down
	ns := append([]Node(nil), d.nodes...)
	d.mu.Unlock()
	if down {
		http.Error(w, `{"error_message": "{\"faultstring\": \"Service Unavailable (Ironic double)\"}"}`, http.StatusServiceUnavailable)
		return
	}
	if r.URL.Path != "/v1/nodes/detail" || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	v := r.Header.Get("X-OpenStack-Ironic-API-Version")
	if v == "" || versionLess(v, "1.46") {
		// Without a version Ironic answers as 1.1 and resource_class is
		// missing; the double refuses so that a client forgetting it fails.
		http.Error(w, "Ironic double: microversion >= 1.46 required", http.StatusNotAcceptable)
		return
	}
	group := r.URL.Query().Get("conductor_group")
	out := make([]map[string]any, 0, len(ns))
	for _, n := range ns {
		if group != "" && !strings.EqualFold(group, n.ConductorGroup) {
			continue
		}
		out = append(out, nodeJSON(n))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-OpenStack-Ironic-API-Version", v)
	_ = json.NewEncoder(w).Encode(map[string]any{"nodes": out})
}

func nodeJSON(n Node) map[string]any {
	null := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	traits := n.Traits
	if traits == nil {
		traits = []string{}
	}
	return map[string]any{
		"uuid":                   n.UUID,
		"name":                   "node-" + n.UUID[:8],
		"power_state":            null(n.PowerState),
		"provision_state":        n.ProvisionState,
		"target_provision_state": nil,
		"maintenance":            n.Maintenance,
		"maintenance_reason":     nil,
		"resource_class":         null(n.ResourceClass),
		"instance_uuid":          null(n.InstanceUUID),
		"traits":                 traits,
		"conductor_group":        n.ConductorGroup,
		"properties":             map[string]any{},
		"created_at":             "2026-01-01T00:00:00+00:00",
		"links":                  []map[string]string{{"href": "http://ironic/v1/nodes/" + n.UUID, "rel": "self"}},
	}
}

func versionLess(a, b string) bool {
	var am, an, bm, bn int
	parse := func(s string, x, y *int) {
		major, minor, _ := strings.Cut(s, ".")
		*x, *y = atoi(major), atoi(minor)
	}
	parse(a, &am, &an)
	parse(b, &bm, &bn)
	return am < bm || (am == bm && an < bn)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Update changes one node in place.
func (d *IronicDouble) Update(uuid string, f func(*Node)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := range d.nodes {
		if d.nodes[i].UUID == uuid {
			f(&d.nodes[i])
		}
	}
}

// SetDown makes every request fail with 503 (true) or be served (false).
func (d *IronicDouble) SetDown(down bool) {
	d.mu.Lock()
	d.down = down
	d.mu.Unlock()
}

// Remove deletes nodes, as `baremetal node delete` does.
func (d *IronicDouble) Remove(uuids ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.nodes = slices.DeleteFunc(d.nodes, func(n Node) bool { return slices.Contains(uuids, n.UUID) })
}
