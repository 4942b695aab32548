package placementsrv

import (
	"errors"
	"net/http"

	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func providerURL(uuid string) string { return "/resource_providers/" + uuid }

// providerLinks lists the provider's links; which ones depends on the
// microversion.
func providerLinks(r *request, uuid string) []link {
	url := providerURL(uuid)
	rels := []string{"inventories", "usages"}
	if r.at(microversion.Aggregates) {
		rels = append(rels, "aggregates")
	}
	if r.at(microversion.Traits) {
		rels = append(rels, "traits")
	}
	if r.at(microversion.AllocationsLink) {
		rels = append(rels, "allocations")
	}
	links := make([]link, 0, len(rels)+1)
	links = append(links, link{Rel: "self", Href: url})
	for _, rel := range rels {
		links = append(links, link{Rel: rel, Href: url + "/" + rel})
	}
	return links
}

// serializeProvider renders p for the negotiated microversion.
func serializeProvider(r *request, p store.Provider) any {
	out := map[string]any{
		"uuid":       p.UUID,
		"name":       p.Name,
		"generation": p.Generation,
		"links":      providerLinks(r, p.UUID),
	}
	if r.at(microversion.Nested) {
		if p.ParentUUID == "" {
			out["parent_provider_uuid"] = nil
		} else {
			out["parent_provider_uuid"] = p.ParentUUID
		}
		out["root_provider_uuid"] = p.RootUUID
	}
	return out
}

// providerNotFound maps a store miss to upstream's 404.
func providerNotFound(err error, uuid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("No resource provider with uuid %s found", uuid)
	}
	return err
}

func (s *Server) getResourceProvider(r *request) (*response, error) {
	uuid := r.param("uuid")
	p, err := s.store.GetProvider(r.Context(), uuid)
	if err != nil {
		return nil, providerNotFound(err, uuid)
	}
	return ok(serializeProvider(r, p)).withLastModified(lastModified(p.CreatedAt, p.UpdatedAt)), nil
}

var errNotImplemented = errorf(http.StatusNotImplemented, "not implemented")

func (s *Server) listResourceProviders(r *request) (*response, error)  { return nil, errNotImplemented }
func (s *Server) createResourceProvider(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) updateResourceProvider(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) deleteResourceProvider(r *request) (*response, error) { return nil, errNotImplemented }
