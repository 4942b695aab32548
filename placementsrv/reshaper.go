package placementsrv

import (
	"errors"
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// reshape is POST /reshaper (1.30): inventories of several providers and
// allocations of several consumers, replaced atomically.
func (s *Server) reshape(r *request) (*response, error) {
	if !r.at(microversion.Reshaper) {
		return nil, apierror.NotFound("")
	}
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyReshape); err != nil {
		return nil, err
	}
	body, err := r.readValidated(s.schemas.ReshaperPost(r.mv.Minor))
	if err != nil {
		return nil, err
	}
	invs, allocs, err := decodeReshape(body, r.mv)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := s.store.Reshape(r.Context(), invs, allocs); err != nil {
		return nil, reshapeError(err)
	}
	return noContent(), nil
}

// reshapeError maps store errors to upstream's reshaper answers.
func reshapeError(err error) error {
	detail := store.Detail(err)
	switch {
	case errors.Is(err, store.ErrUnknownProvider):
		uuid := strings.TrimSuffix(strings.TrimPrefix(detail, "No resource provider with uuid "), " found")
		return apierror.Codedf(http.StatusBadRequest, apierror.CodeProviderNotFound, "Resource provider %s in inventories not found: %s", uuid, detail)
	case errors.Is(err, store.ErrProviderGeneration), errors.Is(err, store.ErrConsumerGeneration):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "%s", detail)
	case errors.Is(err, store.ErrConcurrentUpdate):
		return apierror.Conflict(apierror.CodeConcurrentUpdate, "update conflict: %s", detail)
	case errors.Is(err, store.ErrInvalid):
		return apierror.BadRequest("%s", detail)
	case errors.Is(err, store.ErrNotFound):
		return apierror.BadRequest("malformed reshaper data: %s", detail)
	case errors.Is(err, store.ErrInventoryInUse):
		return apierror.Conflict(apierror.CodeInventoryInUse, "update conflict: %s", detail)
	case errors.Is(err, store.ErrCapacityExceeded):
		return apierror.Errorf(http.StatusConflict, "Unable to allocate inventory: %s", detail)
	}
	return err
}
