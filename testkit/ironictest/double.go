// Package ironictest starts Ironic for driver and agent tests: the real
// one (Debian's ironic-api and ironic-conductor, standalone; see Start
// and Shared), and IronicDouble, an httptest double of GET
// /v1/nodes/detail kept for what the real one cannot be made to do (an
// API that answers 503, fleets of 10,000 nodes in a unit test).
package ironictest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
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
	Shard          string // "" is reported as null
}

// DoubleMaxVersion is the highest microversion the double answers, as
// Ironic 21.4 does.
const DoubleMaxVersion = "1.82"

// IronicDouble serves nodes as Ironic's API does at microversion >= 1.46,
// paging as Ironic does: at most max_limit nodes (1000 unless set) in id
// order, after the node named by marker, with a top-level "next" link on
// a full page.
type IronicDouble struct {
	URL string // endpoint including /v1

	mu       sync.Mutex
	nodes    []Node // in id order
	down     bool
	maxLimit int
	requests int
}

// NewIronicDouble starts a double; it stops at cleanup.
func NewIronicDouble(t testing.TB, nodes ...Node) *IronicDouble {
	t.Helper()
	d := &IronicDouble{nodes: slices.Clone(nodes), maxLimit: 1000}
	hs := httptest.NewServer(http.HandlerFunc(d.serve))
	t.Cleanup(hs.Close)
	d.URL = hs.URL + "/v1"
	return d
}

func (d *IronicDouble) serve(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	down, maxLimit := d.down, d.maxLimit
	ns := append([]Node(nil), d.nodes...)
	d.requests++
	d.mu.Unlock()
	if down {
		http.Error(w, `{"error_message": "{\"faultstring\": \"Service Unavailable (Ironic double)\"}"}`, http.StatusServiceUnavailable)
		return
	}
	if (r.URL.Path != "/v1/nodes/detail" && r.URL.Path != "/v1/nodes") || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	v := r.Header.Get("X-OpenStack-Ironic-API-Version")
	if v == "latest" {
		v = DoubleMaxVersion
	}
	w.Header().Set("X-OpenStack-Ironic-API-Minimum-Version", "1.1")
	w.Header().Set("X-OpenStack-Ironic-API-Maximum-Version", DoubleMaxVersion)
	if v == "" || versionLess(v, "1.46") || versionLess(DoubleMaxVersion, v) {
		// Without a version Ironic answers as 1.1 and resource_class is
		// missing; the double refuses so that a client forgetting it fails.
		fault(w, http.StatusNotAcceptable, "Ironic double: microversion from 1.46 to "+DoubleMaxVersion+" required")
		return
	}
	q := r.URL.Query()
	if q.Has("shard") && versionLess(v, "1.82") {
		fault(w, http.StatusNotAcceptable, "Request not acceptable. The minimal required API version should be 1.82")
		return
	}
	var fields []string
	if r.URL.Path == "/v1/nodes" {
		fields = defaultFields
		if f := q.Get("fields"); f != "" {
			fields = strings.Split(f, ",")
		}
	} else if q.Has("fields") {
		fault(w, http.StatusBadRequest, "Unexpected arguments: fields")
		return
	}
	page, next, code, msg := pageOf(ns, q, maxLimit, fields)
	if code != http.StatusOK {
		fault(w, code, msg)
		return
	}
	out := map[string]any{"nodes": page}
	if next != "" {
		out["next"] = "http://" + r.Host + r.URL.Path + "?" + next
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-OpenStack-Ironic-API-Version", v)
	_ = json.NewEncoder(w).Encode(out)
}

// pageOf is one page of the filtered nodes, and the query of the next
// page when this one is full. Like Ironic's, that query keeps only sort,
// limit and marker: the filters are lost.
func pageOf(ns []Node, q url.Values, maxLimit int, fields []string) (page []map[string]any, next string, code int, msg string) {
	limit := maxLimit
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, "", http.StatusBadRequest, "Limit must be positive"
		}
		limit = min(n, maxLimit)
	}
	from := 0
	if m := q.Get("marker"); m != "" {
		i := slices.IndexFunc(ns, func(n Node) bool { return n.UUID == m })
		if i < 0 {
			return nil, "", http.StatusNotFound, "Node " + m + " could not be found."
		}
		from = i + 1
	}
	group, shard, rc := q.Get("conductor_group"), q.Get("shard"), q.Get("resource_class")
	page = []map[string]any{}
	last := ""
	for _, n := range ns[from:] {
		if len(page) == limit {
			break
		}
		if (group != "" && !strings.EqualFold(group, n.ConductorGroup)) || (rc != "" && rc != n.ResourceClass) ||
			(shard != "" && !slices.Contains(strings.Split(shard, ","), n.Shard)) {
			continue
		}
		page = append(page, only(nodeJSON(n), fields))
		last = n.UUID
	}
	if len(page) == limit {
		next = "sort_key=id&sort_dir=asc&"
		if fields != nil {
			next += "fields=" + strings.Join(fields, ",") + "&"
		}
		next += "limit=" + strconv.Itoa(limit) + "&marker=" + last
	}
	return page, next, http.StatusOK, ""
}

// fault answers an error in Ironic's wrapping: a JSON string inside
// error_message.
func fault(w http.ResponseWriter, code int, msg string) {
	inner, _ := json.Marshal(map[string]any{"faultcode": "Client", "faultstring": msg, "debuginfo": nil})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error_message": string(inner)})
}

// defaultFields are what GET /v1/nodes answers without a fields
// parameter, in the order its next link names them.
var defaultFields = []string{"instance_uuid", "maintenance", "power_state", "provision_state", "uuid", "name"}

// only keeps the fields asked for (all when fields is nil), and the
// links, which Ironic always adds.
func only(doc map[string]any, fields []string) map[string]any {
	if fields == nil {
		return doc
	}
	out := map[string]any{"links": doc["links"]}
	for _, f := range fields {
		if v, ok := doc[f]; ok {
			out[f] = v
		}
	}
	return out
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
		"shard":                  null(n.Shard),
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

// SetMaxLimit sets the largest page the double answers ([api] max_limit).
func (d *IronicDouble) SetMaxLimit(n int) {
	d.mu.Lock()
	d.maxLimit = n
	d.mu.Unlock()
}

// Requests is how many requests the double has answered.
func (d *IronicDouble) Requests() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.requests
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
