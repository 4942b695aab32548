package novafull

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// ImageID is the one image the Glance double serves.
const ImageID = "c0ffee00-0000-4000-8000-000000000001"

// glanceDouble is a double of Glance's v2 image API: Nova asks for the
// image a server boots from (and glanceclient for the schema it
// validates images with); shelve makes and deletes a snapshot, and tests
// upload images to rebuild with (glanceImages).
func glanceDouble() *httptest.Server {
	image := map[string]any{
		"id": ImageID, "name": "novafull-image", "status": "active", "visibility": "public",
		"container_format": "bare", "disk_format": "raw", "size": 1024, "min_ram": 0, "min_disk": 0,
		"protected": false, "os_hidden": false, "checksum": "0cc175b9c0f1b6a831c399e269772661",
		"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z",
		"owner": "admin", "tags": []string{}, "file": "/v2/images/" + ImageID + "/file",
		"self": "/v2/images/" + ImageID, "schema": "/v2/schemas/image",
	}
	// Nova keeps as image attributes only what the schema names, and
	// glanceclient refuses an image with an attribute the schema does not
	// name unless it is a string (Glance's own are often null).
	props := map[string]any{}
	for k := range image {
		props[k] = map[string]any{}
	}
	for _, k := range glanceReadOnly {
		props[k] = map[string]any{}
	}
	schema := map[string]any{"name": "image", "properties": props, "additionalProperties": map[string]string{"type": "string"}}
	images := newGlanceImages(image)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v2/schemas/image":
			writeJSON(w, http.StatusOK, schema)
		default:
			images.ServeHTTP(w, r)
		}
	}))
}

// neutronDouble is a double of Neutron for servers booted with networks
// "none": Nova still lists the ports of a server it deletes or moves, and
// the extensions Neutron offers. Every list answers empty.
func neutronDouble() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v2.0/"), ".json")
		if r.Method == http.MethodGet && name != "" && !strings.Contains(name, "/") {
			writeJSON(w, http.StatusOK, map[string]any{strings.ReplaceAll(name, "-", "_"): []any{}})
			return
		}
		writeJSON(w, http.StatusNotFound, map[string]any{"NeutronError": map[string]string{"message": "not in the Neutron double"}})
	}))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// router is the Placement every Nova service is configured with: it
// forwards to the Placement of the scenario being run, so that one Nova
// serves several Placements in turn. Nova talks to Placement without
// Keystone ([placement] auth_type none); the router puts in the noauth2
// admin token the servers expect.
type router struct {
	*httptest.Server
	mu     sync.Mutex
	target *httputil.ReverseProxy
}

// versionDocument is what the router answers to GET / while no Placement
// is behind it: Nova's services discover Placement's version once, at
// start, before any scenario has started its Placement. Both releases
// serve 1.0 to 1.39.
func versionDocument() map[string]any {
	return map[string]any{"versions": []any{map[string]any{
		"id": "v1.0", "min_version": "1.0", "max_version": "1.39", "status": "CURRENT",
		"links": []any{map[string]string{"rel": "self", "href": ""}},
	}}}
}

func newRouter() *router {
	rt := &router{}
	rt.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt.mu.Lock()
		target := rt.target
		rt.mu.Unlock()
		if target == nil && r.URL.Path == "/" {
			writeJSON(w, http.StatusOK, versionDocument())
			return
		}
		if target == nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"message": "no Placement behind the router"})
			return
		}
		// keystoneauth's "none" plugin sends the token "notused".
		r.Header.Set("X-Auth-Token", "admin")
		target.ServeHTTP(w, r)
	}))
	return rt
}

// use points the router at base (a Placement's URL); "" answers 503.
func (rt *router) use(base string) error {
	var p *httputil.ReverseProxy
	if base != "" {
		u, err := url.Parse(base)
		if err != nil {
			return err
		}
		p = httputil.NewSingleHostReverseProxy(u)
		// uWSGI's http-socket closes idle connections without warning.
		p.Transport = &http.Transport{DisableKeepAlives: true}
	}
	rt.mu.Lock()
	rt.target = p
	rt.mu.Unlock()
	return nil
}
