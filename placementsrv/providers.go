package placementsrv

import (
	"errors"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func providerURL(uuid string) string { return "/resource_providers/" + uuid }

// providerRels are the sub-resource links of a provider after "self", each
// with the microversion that added it.
var providerRels = [...]struct {
	rel   string
	since microversion.Version
}{
	{"inventories", microversion.Min},
	{"usages", microversion.Min},
	{"aggregates", microversion.Aggregates},
	{"traits", microversion.Traits},
	{"allocations", microversion.AllocationsLink},
}

// providerLinks lists the provider's links; which ones depends on the
// microversion.
func providerLinks(r *request, uuid string) []link {
	url := providerURL(uuid)
	links := make([]link, 0, len(providerRels)+1)
	links = append(links, link{Rel: "self", Href: url})
	for _, pr := range providerRels {
		if r.at(pr.since) {
			links = append(links, link{Rel: pr.rel, Href: url + "/" + pr.rel})
		}
	}
	return links
}

// providerDoc is a provider as the API shows it. It encodes itself
// directly, in upstream's key order, because provider lists are large and
// frequent.
type providerDoc struct {
	p  store.Provider
	mv microversion.Version
}

// serializeProvider renders p for the negotiated microversion.
func serializeProvider(r *request, p store.Provider) any {
	return providerDoc{p: p, mv: r.mv}
}

// MarshalJSON implements json.Marshaler.
func (d providerDoc) MarshalJSON() ([]byte, error) {
	return appendProviderJSON(make([]byte, 0, 512), d.p, d.mv), nil
}

// appendProviderJSON appends the JSON of p at microversion mv.
func appendProviderJSON(b []byte, p store.Provider, mv microversion.Version) []byte {
	b = append(b, `{"uuid":`...)
	b = jsonenc.AppendString(b, p.UUID)
	b = append(b, `,"name":`...)
	b = jsonenc.AppendString(b, p.Name)
	b = append(b, `,"generation":`...)
	b = jsonenc.AppendInt(b, p.Generation)
	b = append(b, `,"links":[{"rel":"self","href":"/resource_providers/`...)
	b = jsonenc.AppendEscaped(b, p.UUID)
	b = append(b, `"}`...)
	for _, pr := range providerRels {
		if !mv.AtLeast(pr.since) {
			continue
		}
		b = append(b, `,{"rel":"`...)
		b = append(b, pr.rel...)
		b = append(b, `","href":"/resource_providers/`...)
		b = jsonenc.AppendEscaped(b, p.UUID)
		b = append(b, '/')
		b = append(b, pr.rel...)
		b = append(b, `"}`...)
	}
	b = append(b, ']')
	if mv.AtLeast(microversion.Nested) {
		b = append(b, `,"parent_provider_uuid":`...)
		if p.ParentUUID == "" {
			b = append(b, "null"...)
		} else {
			b = jsonenc.AppendString(b, p.ParentUUID)
		}
		b = append(b, `,"root_provider_uuid":`...)
		b = jsonenc.AppendString(b, p.RootUUID)
	}
	return append(b, '}')
}

// providerNotFound maps a store miss to upstream's 404.
func providerNotFound(err error, uuid string) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierror.NotFound("No resource provider with uuid %s found", uuid)
	}
	return err
}

func (s *Server) getResourceProvider(r *request) (*response, error) {
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPShow); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	p, err := s.store.GetProvider(r.Context(), uuid)
	if err != nil {
		return nil, providerNotFound(err, uuid)
	}
	return ok(serializeProvider(r, p)).withLastModified(lastModified(p.CreatedAt, p.UpdatedAt)), nil
}

// createResourceProvider is POST /resource_providers: 201 with a Location
// and no body before 1.20, 200 with the provider from 1.20.
func (s *Server) createResourceProvider(r *request) (*response, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPCreate); err != nil {
		return nil, err
	}
	doc, err := r.decodeJSON(s.schemas.ProviderCreate(r.minor()))
	if err != nil {
		return nil, err
	}
	body := doc.(map[string]any)
	np := store.NewProvider{}
	np.Name, _ = body["name"].(string)
	np.UUID, _ = body["uuid"].(string)
	np.ParentUUID, _ = body["parent_provider_uuid"].(string)
	if np.UUID != "" {
		np.UUID, _ = query.NormalizeUUID(np.UUID) // the schema checked the format
	} else {
		np.UUID = newUUID()
	}
	p, err := s.store.CreateProvider(r.Context(), np)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return nil, apierror.Conflict(apierror.CodeDuplicateName, "%s", store.Detail(err))
	case errors.Is(err, store.ErrInvalid):
		return nil, apierror.BadRequest("Unable to create resource provider \"%s\", %s: %s", np.Name, np.UUID, store.Detail(err))
	case err != nil:
		return nil, err
	}
	var resp *response
	if r.at(microversion.ProviderPostBody) {
		// Upstream's freshly created object has no timestamps loaded, so
		// it reports the current time.
		resp = ok(serializeProvider(r, p)).withLastModified(s.now())
	} else {
		resp = &response{status: http.StatusCreated}
	}
	return resp.setHeader("Location", absoluteURL(r, providerURL(p.UUID))), nil
}

// updateResourceProvider is PUT /resource_providers/{uuid}: rename, set a
// parent (1.14) and re-parent or un-parent (1.37).
func (s *Server) updateResourceProvider(r *request) (*response, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPUpdate); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	before, err := s.store.GetProvider(r.Context(), uuid)
	if err != nil {
		return nil, providerNotFound(err, uuid)
	}
	doc, err := r.decodeJSON(s.schemas.ProviderUpdate(r.minor()))
	if err != nil {
		return nil, err
	}
	body := doc.(map[string]any)
	u := store.ProviderUpdate{AllowReparent: r.at(microversion.Reparent)}
	u.Name, _ = body["name"].(string)
	if v, present := body["parent_provider_uuid"]; present {
		parent, _ := v.(string) // null un-parents
		u.ParentUUID = &parent
	}
	p, err := s.store.UpdateProvider(r.Context(), uuid, u)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, providerNotFound(err, uuid)
	case errors.Is(err, store.ErrDuplicate):
		return nil, apierror.Conflict(apierror.CodeDuplicateName, "Conflicting resource provider %s already exists.", u.Name)
	case errors.Is(err, store.ErrInvalid):
		return nil, apierror.BadRequest("Unable to save resource provider %s: %s", uuid, store.Detail(err))
	case err != nil:
		return nil, err
	}
	resp := ok(serializeProvider(r, p))
	// Upstream reports the update time it read before saving: none for a
	// provider never updated, in which case only Cache-Control is sent.
	if r.at(microversion.CacheHeaders) {
		resp.withLastModified(before.UpdatedAt)
		resp.setHeader("Cache-Control", "no-cache")
	}
	return resp, nil
}

// deleteResourceProvider is DELETE /resource_providers/{uuid}.
func (s *Server) deleteResourceProvider(r *request) (*response, error) {
	if err := r.authorize(policyRPDelete); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	err := s.store.DeleteProvider(r.Context(), uuid)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, apierror.NotFound("No resource provider with uuid %s found for delete", uuid)
	case errors.Is(err, store.ErrProviderInUse):
		return nil, apierror.Conflict(apierror.CodeProviderInUse, "Unable to delete resource provider %s: %s", uuid, store.Detail(err))
	case errors.Is(err, store.ErrCannotDeleteParent):
		return nil, apierror.Conflict(apierror.CodeProviderCannotDelete, "Unable to delete parent resource provider %s: It has child resource providers.", uuid)
	case err != nil:
		return nil, err
	}
	return noContent(), nil
}

// listResourceProviders is GET /resource_providers with its filters.
func (s *Server) listResourceProviders(r *request) (*response, error) {
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPList); err != nil {
		return nil, err
	}
	q := query.Values(r.URL.RawQuery)
	if err := s.schemas.ProviderListQuery(r.minor()).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	f, herr := providerFilterFromQuery(q, r.mv)
	if herr != nil {
		return nil, herr
	}
	ps, err := s.store.ListProviders(r.Context(), f)
	switch {
	case errors.Is(err, store.ErrUnknownResourceClass):
		return nil, apierror.BadRequest("Invalid resource class in resources parameter: %s", store.Detail(err))
	case errors.Is(err, store.ErrUnknownTrait):
		return nil, apierror.BadRequest("Invalid trait(s) in \"required\" parameter: %s", store.Detail(err))
	case err != nil:
		return nil, err
	}
	var last time.Time
	b := make([]byte, 0, 64+len(ps)*700)
	b = append(b, `{"resource_providers":[`...)
	for i, p := range ps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendProviderJSON(b, p, r.mv)
		last = latest(last, lastModified(p.CreatedAt, p.UpdatedAt))
	}
	b = append(b, "]}"...)
	if last.IsZero() {
		last = s.now()
	}
	return ok(jsonenc.Raw(b)).withLastModified(last), nil
}

// providerFilterFromQuery turns validated query parameters into a store
// filter, in upstream's order: member_of, required, then resources.
func providerFilterFromQuery(q map[string][]string, mv microversion.Version) (store.ProviderFilter, *apierror.Error) {
	var f store.ProviderFilter
	if vs, ok := q["member_of"]; ok {
		aq, herr := query.ParseMemberOf(vs, "", mv)
		if herr != nil {
			return f, herr
		}
		f.MemberOf, f.NotMemberOf = aq.Required, aq.Forbidden
	}
	if vs, ok := q["required"]; ok {
		tq, herr := query.ParseRequired(vs, mv)
		if herr != nil {
			return f, herr
		}
		f.Required, f.Forbidden = tq.Required, tq.Forbidden
	}
	last := func(k string) string {
		vs := q[k]
		if len(vs) == 0 {
			return ""
		}
		return vs[len(vs)-1]
	}
	f.UUID, f.Name, f.InTree = last("uuid"), last("name"), last("in_tree")
	if vs, ok := q["resources"]; ok {
		res, herr := query.ParseResources(vs[len(vs)-1])
		if herr != nil {
			return f, herr
		}
		for _, ra := range res {
			f.Resources = append(f.Resources, store.ResourceAmount{Class: ra.Class, Amount: ra.Amount})
		}
	}
	return f, nil
}
