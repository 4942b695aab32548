package novatest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/testkit/computeapi"
)

// Token is the noauth2 token of an admin in project admin.
const Token = "admin:admin"

// Microversion is the compute microversion the helpers ask for: 2.53
// gives services and hypervisors their uuids.
const Microversion = "2.53"

// client calls the compute API as the admin. One connection per
// request, as uWSGI's http-socket may close an idle one just as a
// request is sent on it; and uWSGI now and then resets or closes a fresh
// connection before reading the request (nothing in its log), so that
// request, not served, is sent again: a retried write that had been
// served would answer 409, which the caller sees.
func (n *Nova) client() computeapi.Client {
	return computeapi.Client{Microversion: Microversion, Project: "admin", Timeout: 30 * time.Second,
		Identity: func(h http.Header, project string) {
			h.Set("X-Auth-Token", Token)
			h.Set("X-Auth-Project-Id", project)
		},
		FreshConnections: true, ServerLog: n.Log}
}

// Aggregate is a Nova host aggregate.
type Aggregate struct {
	ID    int      `json:"id"`
	UUID  string   `json:"uuid"`
	Name  string   `json:"name"`
	Hosts []string `json:"hosts"`
}

// CreateAggregate creates an aggregate through the API.
func (n *Nova) CreateAggregate(ctx context.Context, name string) (Aggregate, error) {
	var out struct {
		Aggregate Aggregate `json:"aggregate"`
	}
	err := n.Call(ctx, http.StatusOK, http.MethodPost, "/os-aggregates", map[string]any{"aggregate": map[string]any{"name": name}}, &out)
	return out.Aggregate, err
}

// AddHost adds a host to an aggregate through the API.
func (n *Nova) AddHost(ctx context.Context, aggregate int, host string) error {
	return n.Call(ctx, http.StatusOK, http.MethodPost, "/os-aggregates/"+strconv.Itoa(aggregate)+"/action",
		map[string]any{"add_host": map[string]any{"host": host}}, nil)
}

// RemoveHost removes a host from an aggregate through the API.
func (n *Nova) RemoveHost(ctx context.Context, aggregate int, host string) error {
	return n.Call(ctx, http.StatusOK, http.MethodPost, "/os-aggregates/"+strconv.Itoa(aggregate)+"/action",
		map[string]any{"remove_host": map[string]any{"host": host}}, nil)
}

// serviceID is the uuid of host's nova-compute service.
func (n *Nova) serviceID(ctx context.Context, host string) (string, error) {
	ids, err := n.ComputeServices(ctx, host)
	if err != nil {
		return "", err
	}
	if len(ids) != 1 {
		return "", fmt.Errorf("novatest: %d nova-compute services on host %s", len(ids), host)
	}
	return ids[0], nil
}

// UpdateService sets a compute service's fields through the API, e.g.
// {"status": "disabled"} or {"forced_down": true}.
func (n *Nova) UpdateService(ctx context.Context, host string, fields map[string]any) error {
	id, err := n.serviceID(ctx, host)
	if err != nil {
		return err
	}
	return n.Call(ctx, http.StatusOK, http.MethodPut, "/os-services/"+id, fields, nil)
}

// DeleteService deletes a compute service through the API.
func (n *Nova) DeleteService(ctx context.Context, host string) error {
	id, err := n.serviceID(ctx, host)
	if err != nil {
		return err
	}
	return n.Call(ctx, http.StatusNoContent, http.MethodDelete, "/os-services/"+id, nil, nil)
}

// startStub serves nova-api's [placement]: a Placement double that finds
// no provider by name, so nova-api's own aggregate mirroring writes
// nothing (it only logs) and leaves the tests' Placement to the code
// under test; a compute node's tree is itself alone, and deleting it
// succeeds, which is all a service delete needs.
func (n *Nova) startStub() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("novatest: placement stand-in: %w", err)
	}
	mux := http.NewServeMux()
	// Version discovery, as Placement answers it.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"versions": [{"id": "v1.0", "min_version": "1.0", "max_version": "`+microversion.Max.String()+`", "status": "CURRENT", "links": [{"rel": "self", "href": ""}]}]}`)
	})
	mux.HandleFunc("GET /resource_providers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// A service delete looks its compute nodes' trees up, then
		// deletes them: each is answered as a lone provider.
		if u := r.URL.Query().Get("in_tree"); u != "" {
			_ = json.NewEncoder(w).Encode(map[string]any{"resource_providers": []any{map[string]any{
				"uuid": u, "name": u, "generation": 0, "root_provider_uuid": u, "parent_provider_uuid": nil}}})
			return
		}
		_, _ = io.WriteString(w, `{"resource_providers": []}`)
	})
	mux.HandleFunc("DELETE /resource_providers/{uuid}", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"errors": [{"status": 404, "title": "Not Found", "detail": "no such provider"}]}`)
	})
	n.stub = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	n.stubErr = make(chan error, 1)
	go func() { n.stubErr <- n.stub.Serve(ln) }()
	n.stubAddrV = ln.Addr().String()
	return nil
}

func (n *Nova) stubAddr() string { return n.stubAddrV }

func (n *Nova) stopStub() error {
	if n.stub == nil {
		return nil
	}
	err := n.stub.Close()
	if serr := <-n.stubErr; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	n.stub = nil
	return err
}
