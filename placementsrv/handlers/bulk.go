package handlers

import (
	"context"
	"encoding/json"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
)

// bulkWrite runs a POST that replaces many records at once (allocations,
// reshaper): g's checks, the body validated against the microversion's
// schema and decoded (a decoding failure is upstream's "Malformed JSON"),
// then one write, whose error write maps itself; 204 on success.
func bulkWrite[T any](r *middleware.Request, g guard, sch func(microversion.Version) *jsonschema.Schema,
	decode func(json.RawMessage, microversion.Version) (T, error),
	write func(context.Context, T) error,
) (*middleware.Response, error) {
	if err := g.check(r); err != nil {
		return nil, err
	}
	body, err := r.ReadValidated(sch(r.Version))
	if err != nil {
		return nil, err
	}
	req, err := decode(body, r.Version)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := write(r.Context(), req); err != nil {
		return nil, err
	}
	return middleware.NoContent(), nil
}
