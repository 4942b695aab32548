package handlers

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// invalidTraitName is upstream's fixed text for a PUT /traits/{name} whose
// name is not a valid custom trait.
const invalidTraitName = `The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"`

// traitsBody is the traits document; field order is upstream's.
type traitsBody struct {
	Traits []string `json:"traits"`
}

type providerTraitsBody struct {
	Traits     []string `json:"traits"`
	Generation int64    `json:"resource_provider_generation"`
}

// traitNames returns the names and upstream's Last-Modified for a list of
// traits: the newest change, or now when the list is empty.
func traitNames(ts []store.Trait, now time.Time) ([]string, time.Time) {
	names := make([]string, len(ts))
	var lm time.Time
	for i, t := range ts {
		names[i] = t.Name
		lm = latest(lm, lastModified(t.CreatedAt, t.UpdatedAt))
	}
	if lm.IsZero() {
		lm = now
	}
	return names, lm
}

// traitFilter reads GET /traits' query as upstream does: the last value of
// a repeated parameter wins; name is "in:A,B" or "startswith:P" (any other
// operator filters nothing); associated is true or false in any case.
func (a *API) traitFilter(r *middleware.Request) (store.TraitFilter, error) {
	var f store.TraitFilter
	q := r.URL.Query()
	if err := a.schemas.TraitListQuery().ValidateQuery(q); err != nil {
		return f, apierror.BadRequest("Invalid query string parameters: %s", err)
	}
	if vs, ok := q["name"]; ok {
		v := vs[len(vs)-1]
		op, value, found := strings.Cut(v, ":")
		if !found {
			return f, apierror.BadRequest(`Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "%s"`, v)
		}
		switch op {
		case "in":
			f.NameIn = strings.Split(value, ",")
		case "startswith":
			f.NamePrefix = value
		}
	}
	if vs, ok := q["associated"]; ok {
		switch strings.ToLower(vs[len(vs)-1]) {
		case "true":
			f.Associated = new(true)
		case "false":
			f.Associated = new(false)
		default:
			return f, apierror.BadRequest(`The query parameter "associated" only accepts "true" or "false"`)
		}
	}
	return f, nil
}

// ListTraits is GET /traits (1.6).
func (a *API) ListTraits(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.TraitList).from(microversion.Traits).check(r); err != nil {
		return nil, err
	}
	f, err := a.traitFilter(r)
	if err != nil {
		return nil, err
	}
	ts, err := a.store.ListTraits(r.Context(), f)
	if err != nil {
		return nil, err
	}
	names, lm := traitNames(ts, a.now())
	return middleware.OK(traitsBody{Traits: names}).WithLastModified(lm), nil
}

// GetTrait is GET /traits/{name} (1.6).
func (a *API) GetTrait(r *middleware.Request) (*middleware.Response, error) {
	t, err := named(r, policyOnly(policy.TraitShow).from(microversion.Traits), a.store.GetTrait)
	if err != nil {
		// The trait handlers turn TraitNotFound into their own 404.
		return nil, handled(err)
	}
	return middleware.NoContent().WithLastModified(t.CreatedAt), nil
}

// PutTrait is PUT /traits/{name} (1.6): a custom trait, created unless
// it exists.
func (a *API) PutTrait(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.TraitUpdate).from(microversion.Traits).check(r); err != nil {
		return nil, err
	}
	name := r.Param("name")
	// Python's "$" lets the pattern accept one final newline. Routing
	// already dropped one; a second makes upstream store the name and then
	// fail with a 500 on its Location header, so it is refused here.
	if err := a.schemas.CustomTrait().Validate(name); err != nil || strings.HasSuffix(name, "\n") {
		return nil, apierror.BadRequest("%s", invalidTraitName)
	}
	t, created, err := a.store.EnsureTrait(r.Context(), name)
	if err != nil {
		return nil, err
	}
	return createdOrKept(r, created, "/traits/"+t.Name).WithLastModified(t.CreatedAt), nil
}

// DeleteTrait is DELETE /traits/{name} (1.6).
func (a *API) DeleteTrait(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.TraitDelete).from(microversion.Traits).check(r); err != nil {
		return nil, err
	}
	err := a.store.DeleteTrait(r.Context(), r.Param("name"))
	switch {
	case err == nil:
		return middleware.NoContent(), nil
	case errors.Is(err, store.ErrStandard):
		return nil, apierror.BadRequest("%s", store.Detail(err))
	case errors.Is(err, store.ErrTraitInUse):
		return nil, apierror.Conflict(apierror.CodeDefault, "%s", store.Detail(err))
	}
	return nil, handled(storeNotFound(err))
}

// ListProviderTraits is GET /resource_providers/{uuid}/traits (1.6).
func (a *API) ListProviderTraits(r *middleware.Request) (*middleware.Response, error) {
	g := reads(policy.RPTraitList).from(microversion.Traits)
	p, ts, err := providerPart(r, g, a.store.ProviderTraits, traitsProviderNotFound)
	if err != nil {
		return nil, err
	}
	names, lm := traitNames(ts, a.now())
	return middleware.OK(providerTraitsBody{Traits: names, Generation: p.Generation}).WithLastModified(lm), nil
}

// providerTraitsRequest is a validated PUT /resource_providers/{u}/traits
// body. Generation is nil when the body's integer cannot be any provider's
// generation (too large for int64), which can only conflict.
type providerTraitsRequest struct {
	Traits     []string
	Generation *int64
}

// decodeProviderTraits reads and validates a PUT provider traits body.
func (a *API) decodeProviderTraits(r *middleware.Request) (providerTraitsRequest, error) {
	var out providerTraitsRequest
	doc, err := r.DecodeJSON(a.schemas.ProviderTraitsSet())
	if err != nil {
		return out, err
	}
	m := doc.(map[string]any)
	for _, t := range m["traits"].([]any) {
		out.Traits = append(out.Traits, t.(string))
	}
	out.Generation = jsonInteger(m["resource_provider_generation"].(json.Number))
	return out, nil
}

// SetProviderTraits is PUT /resource_providers/{uuid}/traits (1.6).
func (a *API) SetProviderTraits(r *middleware.Request) (*middleware.Response, error) {
	if err := writes(policy.RPTraitUpdate).from(microversion.Traits).check(r); err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	req, err := a.decodeProviderTraits(r)
	if err != nil {
		return nil, err
	}
	if req.Generation == nil {
		if _, err := a.store.GetProvider(r.Context(), uuid); err != nil {
			return nil, providerNotFound(err, uuid)
		}
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
	}
	p, ts, err := a.store.SetProviderTraits(r.Context(), uuid, *req.Generation, req.Traits)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", store.Detail(err))
	case errors.Is(err, store.ErrInvalid):
		return nil, apierror.BadRequest("%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	names, lm := traitNames(ts, a.now())
	return middleware.OK(providerTraitsBody{Traits: names, Generation: p.Generation}).WithLastModified(lm), nil
}

// DeleteProviderTraits is DELETE /resource_providers/{uuid}/traits (1.6).
func (a *API) DeleteProviderTraits(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.RPTraitDelete).from(microversion.Traits).check(r); err != nil {
		return nil, err
	}
	uuid := r.Param("uuid")
	err := a.store.DeleteProviderTraits(r.Context(), uuid)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return middleware.NoContent(), nil
}
