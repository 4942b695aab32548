package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/query"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/uuid4"
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

// providerDoc is a provider as the API shows it. It encodes itself
// directly, in upstream's key order, because provider lists are large and
// frequent.
type providerDoc struct {
	p  store.Provider
	mv microversion.Version
}

// serializeProvider renders p for the negotiated microversion.
func serializeProvider(r *middleware.Request, p store.Provider) any {
	return providerDoc{p: p, mv: r.Version}
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

// GetResourceProvider is GET /resource_providers/{uuid}.
func (a *API) GetResourceProvider(r *middleware.Request) (*middleware.Response, error) {
	p, err := a.guardedProvider(r, reads(policy.RPShow))
	if err != nil {
		return nil, err
	}
	return middleware.OK(serializeProvider(r, p)).WithLastModified(lastModified(p.CreatedAt, p.UpdatedAt)), nil
}

// CreateResourceProvider is POST /resource_providers: 201 with a Location
// and no body before 1.20, 200 with the provider from 1.20.
func (a *API) CreateResourceProvider(r *middleware.Request) (*middleware.Response, error) {
	if err := writes(policy.RPCreate).check(r); err != nil {
		return nil, err
	}
	doc, err := r.DecodeJSON(a.schemas.ProviderCreate(r.Version))
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
		np.UUID = uuid4.New()
	}
	p, err := a.store.CreateProvider(r.Context(), np)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return nil, apierror.Conflict(apierror.CodeDuplicateName, "%s", store.Detail(err))
	case errors.Is(err, store.ErrInvalid):
		return nil, apierror.BadRequest("Unable to create resource provider \"%s\", %s: %s", np.Name, np.UUID, store.Detail(err))
	case err != nil:
		return nil, err
	}
	var resp *middleware.Response
	if r.At(microversion.ProviderPostBody) {
		// Upstream's freshly created object has no timestamps loaded, so
		// it reports the current time.
		resp = middleware.OK(serializeProvider(r, p)).WithLastModified(a.now())
	} else {
		resp = &middleware.Response{Status: http.StatusCreated}
	}
	return resp.SetHeader("Location", absoluteURL(r, providerURL(p.UUID))), nil
}

// UpdateResourceProvider is PUT /resource_providers/{uuid}: rename, set a
// parent (1.14) and re-parent or un-parent (1.37).
func (a *API) UpdateResourceProvider(r *middleware.Request) (*middleware.Response, error) {
	before, err := a.guardedProvider(r, writes(policy.RPUpdate))
	if err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	doc, err := r.DecodeJSON(a.schemas.ProviderUpdate(r.Version))
	if err != nil {
		return nil, err
	}
	body := doc.(map[string]any)
	u := store.ProviderUpdate{AllowReparent: r.At(microversion.Reparent)}
	u.Name, _ = body["name"].(string)
	if v, present := body["parent_provider_uuid"]; present {
		parent, _ := v.(string) // null un-parents
		u.ParentUUID = &parent
	}
	p, err := a.store.UpdateProvider(r.Context(), uuid, u)
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
	resp := middleware.OK(serializeProvider(r, p))
	// Upstream reports the update time it read before saving: none for a
	// provider never updated, in which case only Cache-Control is sent.
	if r.At(microversion.CacheHeaders) {
		resp.WithLastModified(before.UpdatedAt)
		resp.SetHeader("Cache-Control", "no-cache")
	}
	return resp, nil
}

// DeleteResourceProvider is DELETE /resource_providers/{uuid}.
func (a *API) DeleteResourceProvider(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.RPDelete).check(r); err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	err := a.store.DeleteProvider(r.Context(), uuid)
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
	return middleware.NoContent(), nil
}

// ListResourceProviders is GET /resource_providers with its filters.
func (a *API) ListResourceProviders(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.RPList).check(r); err != nil {
		return nil, err
	}
	q := query.Values(r.URL.RawQuery)
	if err := a.schemas.ProviderListQueryOf(a.release, r.Version).ValidateQuery(q); err != nil {
		return nil, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	f, herr := providerFilterFromQuery(q, r.Version)
	if herr != nil {
		return nil, herr
	}
	ps, err := a.store.ListProviders(r.Context(), f)
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
		b = appendProviderJSON(b, p, r.Version)
		last = latest(last, lastModified(p.CreatedAt, p.UpdatedAt))
	}
	b = append(b, "]}"...)
	if last.IsZero() {
		last = a.now()
	}
	return middleware.OK(jsonenc.Raw(b)).WithLastModified(last), nil
}

// providerFilterFromQuery turns validated query parameters into a store
// filter, in upstream's order: member_of, required, then resources.
func providerFilterFromQuery(q url.Values, mv microversion.Version) (store.ProviderFilter, *apierror.Error) {
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
	f.UUID, f.Name, f.InTree = query.Last(q, "uuid"), query.Last(q, "name"), query.Last(q, "in_tree")
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
