package placementsrv

import (
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
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
func (s *Server) traitFilter(r *request) (store.TraitFilter, error) {
	var f store.TraitFilter
	q := r.URL.Query()
	if err := s.schemas.TraitListQuery().ValidateQuery(q); err != nil {
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

func (s *Server) listTraits(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyTraitList); err != nil {
		return nil, err
	}
	f, err := s.traitFilter(r)
	if err != nil {
		return nil, err
	}
	ts, err := s.store.ListTraits(r.Context(), f)
	if err != nil {
		return nil, err
	}
	names, lm := traitNames(ts, s.now())
	return ok(traitsBody{Traits: names}).withLastModified(lm), nil
}

// traitNotFound maps a store miss to upstream's 404.
func traitNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierror.NotFound("%s", store.Detail(err))
	}
	return err
}

func (s *Server) getTrait(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if err := r.authorize(policyTraitShow); err != nil {
		return nil, err
	}
	t, err := s.store.GetTrait(r.Context(), r.param("name"))
	if err != nil {
		return nil, traitNotFound(err)
	}
	return noContent().withLastModified(t.CreatedAt), nil
}

func (s *Server) putTrait(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if err := r.authorize(policyTraitUpdate); err != nil {
		return nil, err
	}
	name := r.param("name")
	// Python's "$" lets the pattern accept one final newline. Routing
	// already dropped one; a second makes upstream store the name and then
	// fail with a 500 on its Location header, so it is refused here.
	if err := s.schemas.CustomTrait().Validate(name); err != nil || strings.HasSuffix(name, "\n") {
		return nil, apierror.BadRequest("%s", invalidTraitName)
	}
	t, created, err := s.store.EnsureTrait(r.Context(), name)
	if err != nil {
		return nil, err
	}
	resp := noContent()
	if created {
		resp.status = http.StatusCreated
	}
	return resp.setHeader("Location", absoluteURL(r, "/traits/"+t.Name)).withLastModified(t.CreatedAt), nil
}

func (s *Server) deleteTrait(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if err := r.authorize(policyTraitDelete); err != nil {
		return nil, err
	}
	err := s.store.DeleteTrait(r.Context(), r.param("name"))
	switch {
	case err == nil:
		return noContent(), nil
	case errors.Is(err, store.ErrStandard):
		return nil, apierror.BadRequest("%s", store.Detail(err))
	case errors.Is(err, store.ErrTraitInUse):
		return nil, apierror.Conflict(apierror.CodeDefault, "%s", store.Detail(err))
	}
	return nil, traitNotFound(err)
}

func (s *Server) listProviderTraits(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPTraitList); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	p, ts, err := s.store.ProviderTraits(r.Context(), uuid)
	if errors.Is(err, store.ErrNotFound) {
		// Upstream appends the exception's own text to its message.
		msg := "No resource provider with uuid " + uuid + " found"
		return nil, apierror.NotFound("%s: %s", msg, msg)
	}
	if err != nil {
		return nil, err
	}
	names, lm := traitNames(ts, s.now())
	return ok(providerTraitsBody{Traits: names, Generation: p.Generation}).withLastModified(lm), nil
}

// providerTraitsRequest is a validated PUT /resource_providers/{u}/traits
// body. Generation is nil when the body's integer cannot be any provider's
// generation (too large for int64), which can only conflict.
type providerTraitsRequest struct {
	Traits     []string
	Generation *int64
}

// decodeProviderTraits reads and validates a PUT provider traits body.
func (s *Server) decodeProviderTraits(r *request) (providerTraitsRequest, error) {
	var out providerTraitsRequest
	doc, err := r.decodeJSON(s.schemas.ProviderTraitsSet())
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

// jsonInteger converts a number that validated as a JSON Schema integer
// (which includes floats with no fraction, such as 1.0) to int64; nil
// means it is out of int64's range.
func jsonInteger(n json.Number) *int64 {
	if i, err := n.Int64(); err == nil {
		return &i
	}
	f, _, err := big.ParseFloat(string(n), 10, 256, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return nil
	}
	if i, acc := f.Int64(); acc == big.Exact {
		return &i
	}
	return nil
}

func (s *Server) setProviderTraits(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyRPTraitUpdate); err != nil {
		return nil, err
	}
	req, err := s.decodeProviderTraits(r)
	if err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	if req.Generation == nil {
		if _, err := s.store.GetProvider(r.Context(), uuid); err != nil {
			return nil, providerNotFound(err, uuid)
		}
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "Resource provider's generation already changed. Please update the generation and try again.")
	}
	p, ts, err := s.store.SetProviderTraits(r.Context(), uuid, *req.Generation, req.Traits)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", store.Detail(err))
	case errors.Is(err, store.ErrInvalid):
		return nil, apierror.BadRequest("%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	names, lm := traitNames(ts, s.now())
	return ok(providerTraitsBody{Traits: names, Generation: p.Generation}).withLastModified(lm), nil
}

func (s *Server) deleteProviderTraits(r *request) (*response, error) {
	if !r.at(microversion.Traits) {
		return nil, apierror.NotFound("")
	}
	if err := r.authorize(policyRPTraitDelete); err != nil {
		return nil, err
	}
	uuid := r.param("uuid")
	err := s.store.DeleteProviderTraits(r.Context(), uuid)
	switch {
	case errors.Is(err, store.ErrConcurrentUpdate):
		return nil, apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", store.Detail(err))
	case err != nil:
		return nil, providerNotFound(err, uuid)
	}
	return noContent(), nil
}
