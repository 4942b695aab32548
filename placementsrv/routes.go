package placementsrv

import (
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/handlers"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
)

// handlerFunc answers one request.
type handlerFunc func(r *middleware.Request) (*middleware.Response, error)

// route is one URL template and its handlers by method; order keeps the
// declaration order for the Allow header.
type route struct {
	template string   // the path as declared, the metrics' route label
	segments []string // "{name}" segments are parameters
	methods  map[string]handlerFunc
	order    []string
}

type methodHandler struct {
	method string
	h      handlerFunc
}

func handle(path string, hs ...methodHandler) route {
	rt := route{template: path, methods: map[string]handlerFunc{}}
	if p := strings.Trim(path, "/"); p != "" {
		rt.segments = strings.Split(p, "/")
	}
	for _, mh := range hs {
		rt.methods[mh.method] = mh.h
		rt.order = append(rt.order, mh.method)
	}
	return rt
}

func get(h handlerFunc) methodHandler  { return methodHandler{"GET", h} }
func put(h handlerFunc) methodHandler  { return methodHandler{"PUT", h} }
func post(h handlerFunc) methodHandler { return methodHandler{"POST", h} }
func del(h handlerFunc) methodHandler  { return methodHandler{"DELETE", h} }

// routeTable is the whole API, in upstream's declaration order.
func routeTable(a *handlers.API) []route {
	return []route{
		handle("/", get(a.Home)),
		handle("/resource_classes", get(a.ListResourceClasses), post(a.CreateResourceClass)),
		handle("/resource_classes/{name}", get(a.GetResourceClass), put(a.UpdateResourceClass), del(a.DeleteResourceClass)),
		handle("/resource_providers", get(a.ListResourceProviders), post(a.CreateResourceProvider)),
		handle("/resource_providers/{uuid}", get(a.GetResourceProvider), del(a.DeleteResourceProvider), put(a.UpdateResourceProvider)),
		handle("/resource_providers/{uuid}/inventories", get(a.GetInventories), post(a.CreateInventory), put(a.SetInventories), del(a.DeleteInventories)),
		handle("/resource_providers/{uuid}/inventories/{resource_class}", get(a.GetInventory), put(a.UpdateInventory), del(a.DeleteInventory)),
		handle("/resource_providers/{uuid}/usages", get(a.ListProviderUsages)),
		handle("/resource_providers/{uuid}/aggregates", get(a.GetAggregates), put(a.SetAggregates)),
		handle("/resource_providers/{uuid}/allocations", get(a.ListProviderAllocations)),
		handle("/allocations", post(a.PostAllocations)),
		handle("/allocations/{consumer_uuid}", get(a.GetConsumerAllocations), put(a.PutConsumerAllocations), del(a.DeleteConsumerAllocations)),
		handle("/allocation_candidates", get(a.ListAllocationCandidates)),
		handle("/traits", get(a.ListTraits)),
		handle("/traits/{name}", get(a.GetTrait), put(a.PutTrait), del(a.DeleteTrait)),
		handle("/resource_providers/{uuid}/traits", get(a.ListProviderTraits), put(a.SetProviderTraits), del(a.DeleteProviderTraits)),
		handle("/usages", get(a.GetTotalUsages)),
		handle("/reshaper", post(a.Reshape)),
		// Not Placement's: placement-syncd's own diagnostics.
		handle("/_placement-syncd/explain/allocation_candidates", get(a.ExplainAllocationCandidates)),
		handle("/_placement-syncd/capacity", get(a.Capacity)),
	}
}

// router dispatches by the route table; it is the middleware's
// middleware.Router.
type router struct {
	routes []route
}

func newRouter(a *handlers.API) *router { return &router{routes: routeTable(a)} }

// Dispatch finds the route, checks the method and runs the handler.
func (rr *router) Dispatch(w http.ResponseWriter, req *middleware.Request) {
	rt, params := rr.match(req.URL.Path)
	if rt == nil {
		middleware.WriteError(w, req, apierror.NotFound(""))
		return
	}
	req.Route, req.Params = rt.template, params
	h, ok := rt.methods[req.Method]
	if !ok {
		w.Header().Set("vary", "openstack-api-version")
		w.Header().Set("Allow", strings.Join(rt.order, ", "))
		middleware.WriteError(w, req, &apierror.Error{
			Status: http.StatusMethodNotAllowed,
			Raw:    true,
			Detail: "The method " + req.Method + " is not allowed for this resource. <br /><br />\nThe method specified is not allowed for this resource.",
		})
		return
	}
	resp, err := h(req)
	// Upstream's microversion middleware varies only the responses a
	// handler returned, not the exceptions that escaped it.
	if err == nil || !handlers.Escaped(err) {
		w.Header().Set("vary", "openstack-api-version")
	}
	middleware.WriteResult(w, req, resp, err)
}

// Route returns the template of the route path matches, or "".
func (rr *router) Route(path string) string {
	if rt, _ := rr.match(path); rt != nil {
		return rt.template
	}
	return ""
}

// match finds the route for a path. A parameter matches one non-empty
// segment; a trailing slash is a different path, as upstream.
func (rr *router) match(path string) (*route, map[string]string) {
	// Upstream's route patterns end in a Python "$", which also matches
	// before one final newline: "/traits/X\n" is "/traits/X" there.
	path = strings.TrimSuffix(path, "\n")
	var segs []string
	if path != "/" && path != "" {
		if !strings.HasPrefix(path, "/") {
			return nil, nil
		}
		segs = strings.Split(path[1:], "/")
	}
	for i := range rr.routes {
		rt := &rr.routes[i]
		if len(rt.segments) != len(segs) {
			continue
		}
		var params map[string]string
		matched := true
		for j, seg := range rt.segments {
			if strings.HasPrefix(seg, "{") {
				if segs[j] == "" {
					matched = false
					break
				}
				if params == nil {
					params = map[string]string{}
				}
				params[seg[1:len(seg)-1]] = latin1(segs[j])
				continue
			}
			if seg != segs[j] {
				matched = false
				break
			}
		}
		if matched {
			return rt, params
		}
	}
	return nil, nil
}

// latin1 reads a path segment's bytes as Latin-1, as WSGI hands the path
// to upstream: what it looks up, validates and quotes in its errors.
func latin1(seg string) string {
	for i := 0; i < len(seg); i++ {
		if seg[i] >= 0x80 {
			r := make([]rune, len(seg))
			for j := 0; j < len(seg); j++ {
				r[j] = rune(seg[j])
			}
			return string(r)
		}
	}
	return seg
}
