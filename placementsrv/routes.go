package placementsrv

import "strings"

// handlerFunc answers one request.
type handlerFunc func(r *request) (*response, error)

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
func (s *Server) routeTable() []route {
	return []route{
		handle("/", get(s.home)),
		handle("/resource_classes", get(s.listResourceClasses), post(s.createResourceClass)),
		handle("/resource_classes/{name}", get(s.getResourceClass), put(s.updateResourceClass), del(s.deleteResourceClass)),
		handle("/resource_providers", get(s.listResourceProviders), post(s.createResourceProvider)),
		handle("/resource_providers/{uuid}", get(s.getResourceProvider), del(s.deleteResourceProvider), put(s.updateResourceProvider)),
		handle("/resource_providers/{uuid}/inventories", get(s.getInventories), post(s.createInventory), put(s.setInventories), del(s.deleteInventories)),
		handle("/resource_providers/{uuid}/inventories/{resource_class}", get(s.getInventory), put(s.updateInventory), del(s.deleteInventory)),
		handle("/resource_providers/{uuid}/usages", get(s.listProviderUsages)),
		handle("/resource_providers/{uuid}/aggregates", get(s.getAggregates), put(s.setAggregates)),
		handle("/resource_providers/{uuid}/allocations", get(s.listProviderAllocations)),
		handle("/allocations", post(s.postAllocations)),
		handle("/allocations/{consumer_uuid}", get(s.getConsumerAllocations), put(s.putConsumerAllocations), del(s.deleteConsumerAllocations)),
		handle("/allocation_candidates", get(s.listAllocationCandidates)),
		handle("/traits", get(s.listTraits)),
		handle("/traits/{name}", get(s.getTrait), put(s.putTrait), del(s.deleteTrait)),
		handle("/resource_providers/{uuid}/traits", get(s.listProviderTraits), put(s.setProviderTraits), del(s.deleteProviderTraits)),
		handle("/usages", get(s.getTotalUsages)),
		handle("/reshaper", post(s.reshape)),
	}
}

// match finds the route for a path. A parameter matches one non-empty
// segment; a trailing slash is a different path, as upstream.
func (s *Server) match(path string) (*route, map[string]string) {
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
	for i := range s.routes {
		rt := &s.routes[i]
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
				params[seg[1:len(seg)-1]] = segs[j]
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
