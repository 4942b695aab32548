package handlers

import (
	"context"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// media is the media type check a handler makes before anything else, as
// upstream's check_accept and require_content decorators.
type media uint8

const (
	// anyMedia checks nothing: the handler answers without a body, or
	// reads its body later (after the policy check).
	anyMedia media = iota
	// answerJSON is check_accept: 406 unless Accept admits JSON.
	answerJSON
	// bodyJSON is require_content: 415 unless the body is JSON.
	bodyJSON
)

// guard is what a handler checks first, in upstream's order: the
// microversion that added the route (a bare 404 below it), the media
// type, then the policy rule against the default target.
type guard struct {
	since      microversion.Version
	media      media
	mediaFirst bool   // the media type goes before the microversion
	rule       string // "": the handler authorizes against its own target
}

// selfAuthorized is the rule of a guard whose handler authorizes against
// a target of its own.
const selfAuthorized = ""

// reads guards a handler that answers with a JSON document.
func reads(rule string) guard { return guard{since: microversion.Min, media: answerJSON, rule: rule} }

// writes guards a handler that requires a JSON body.
func writes(rule string) guard { return guard{since: microversion.Min, media: bodyJSON, rule: rule} }

// policyOnly guards a handler that checks no media type up front.
func policyOnly(rule string) guard {
	return guard{since: microversion.Min, media: anyMedia, rule: rule}
}

// from gates the route on the microversion v that added it.
func (g guard) from(v microversion.Version) guard {
	g.since = v
	return g
}

// mediaBeforeVersion checks the media type before the microversion, the
// order in which upstream's aggregates handlers stack their decorators.
func (g guard) mediaBeforeVersion() guard {
	g.mediaFirst = true
	return g
}

// check runs g's checks on r and returns the first refusal.
func (g guard) check(r *middleware.Request) error {
	if g.mediaFirst {
		if err := g.checkMedia(r); err != nil {
			return err
		}
	}
	if !r.At(g.since) {
		return apierror.NotFound("")
	}
	if !g.mediaFirst {
		if err := g.checkMedia(r); err != nil {
			return err
		}
	}
	if g.rule == "" {
		return nil
	}
	return r.Authorize(g.rule)
}

func (g guard) checkMedia(r *middleware.Request) error {
	var herr *apierror.Error
	switch g.media {
	case answerJSON:
		herr = r.CheckAccept()
	case bodyJSON:
		herr = r.RequireJSON()
	}
	if herr != nil {
		return herr
	}
	return nil
}

// providerPart begins a handler under /resource_providers/{uuid}: it
// checks g, then loads the path's provider with the part of its state
// the handler shows; a store miss becomes the 404 notFound words for the
// path's uuid.
func providerPart[T any](r *middleware.Request, g guard,
	load func(context.Context, string) (store.Provider, T, error),
	notFound func(err error, uuid string) error,
) (store.Provider, T, error) {
	if err := g.check(r); err != nil {
		var none T
		return store.Provider{}, none, err
	}
	uuid := r.Param("uuid")
	p, part, err := load(r.Context(), uuid)
	if err != nil {
		return p, part, notFound(err, uuid)
	}
	return p, part, nil
}

// named begins a handler under /resource_classes/{name} or
// /traits/{name}: it checks g, then loads the record the path names; a
// miss is the store's own 404.
func named[T any](r *middleware.Request, g guard, load func(context.Context, string) (T, error)) (T, error) {
	if err := g.check(r); err != nil {
		var none T
		return none, err
	}
	v, err := load(r.Context(), r.Param("name"))
	if err != nil {
		return v, storeNotFound(err)
	}
	return v, nil
}

// guardedProvider checks g, then loads the path's provider as upstream's
// handlers that look it up first: a missing one is a plain 404.
func (a *API) guardedProvider(r *middleware.Request, g guard) (store.Provider, error) {
	p, _, err := providerPart(r, g, a.providerAlone, providerNotFound)
	return p, err
}

// providerAlone is the store's GetProvider in providerPart's form.
func (a *API) providerAlone(ctx context.Context, uuid string) (store.Provider, struct{}, error) {
	p, err := a.store.GetProvider(ctx, uuid)
	return p, struct{}{}, err
}
