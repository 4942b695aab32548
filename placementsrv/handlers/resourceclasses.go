package handlers

import (
	"errors"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

func resourceClassURL(name string) string { return "/resource_classes/" + name }

type resourceClassJSON struct {
	Name  string `json:"name"`
	Links []link `json:"links"`
}

func serializeResourceClass(name string) resourceClassJSON {
	return resourceClassJSON{Name: name, Links: []link{{Rel: "self", Href: resourceClassURL(name)}}}
}

// ListResourceClasses is GET /resource_classes (1.2).
func (a *API) ListResourceClasses(r *middleware.Request) (*middleware.Response, error) {
	if err := reads(policy.ClassList).from(microversion.ResourceClasses).check(r); err != nil {
		return nil, err
	}
	rcs, err := a.store.ListResourceClasses(r.Context())
	if err != nil {
		return nil, err
	}
	out := make([]resourceClassJSON, len(rcs))
	var modified time.Time
	for i, rc := range rcs {
		out[i] = serializeResourceClass(rc.Name)
		modified = latest(modified, lastModified(rc.CreatedAt, rc.UpdatedAt))
	}
	if modified.IsZero() {
		modified = a.now()
	}
	return middleware.OK(map[string]any{"resource_classes": out}).WithLastModified(modified), nil
}

// GetResourceClass is GET /resource_classes/{name} (1.2).
func (a *API) GetResourceClass(r *middleware.Request) (*middleware.Response, error) {
	rc, err := named(r, reads(policy.ClassShow).from(microversion.ResourceClasses), a.store.GetResourceClass)
	if err != nil {
		return nil, err
	}
	modified := lastModified(rc.CreatedAt, rc.UpdatedAt)
	if modified.IsZero() {
		modified = a.now()
	}
	return middleware.OK(serializeResourceClass(rc.Name)).WithLastModified(modified), nil
}

// CreateResourceClass is POST /resource_classes (1.2).
func (a *API) CreateResourceClass(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.ClassCreate).from(microversion.ResourceClasses).check(r); err != nil {
		return nil, err
	}
	doc, err := r.DecodeJSON(a.schemas.ResourceClassCreate())
	if err != nil {
		return nil, err
	}
	name, _ := doc.(map[string]any)["name"].(string)
	if _, err := a.store.CreateResourceClass(r.Context(), name); err != nil {
		if errors.Is(err, store.ErrDuplicate) {
			return nil, apierror.Conflict(apierror.CodeDefault, "Conflicting resource class already exists: %s", name)
		}
		return nil, err
	}
	resp := &middleware.Response{Status: http.StatusCreated}
	resp.SetHeader("Location", absoluteURL(r, resourceClassURL(name)))
	return resp, nil
}

// UpdateResourceClass is PUT /resource_classes/{name}: a rename with a
// body before 1.7, then a bodiless create-or-keep.
func (a *API) UpdateResourceClass(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.ClassUpdate).from(microversion.ResourceClasses).check(r); err != nil {
		return nil, err
	}
	if r.At(microversion.ResourceClassPut) {
		return a.ensureResourceClass(r)
	}
	return a.renameResourceClass(r)
}

// renameResourceClass is PUT with a body at 1.2–1.6.
func (a *API) renameResourceClass(r *middleware.Request) (*middleware.Response, error) {
	name := r.Param("name")
	doc, err := r.DecodeJSON(a.schemas.ResourceClassUpdate())
	if err != nil {
		return nil, err
	}
	newName, _ := doc.(map[string]any)["name"].(string)
	rc, err := a.store.RenameResourceClass(r.Context(), name, newName)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return nil, apierror.Conflict(apierror.CodeDefault, "Resource class already exists: %s", newName)
	case errors.Is(err, store.ErrStandard):
		return nil, apierror.BadRequest("Cannot update standard resource class %s", name)
	case err != nil:
		return nil, storeNotFound(err)
	}
	return middleware.OK(serializeResourceClass(rc.Name)), nil
}

// ensureResourceClass is the bodiless PUT of 1.7: 201 when created, 204
// when it already existed. Like upstream, the name is validated by
// splicing it into a JSON document, so a name that breaks the document is
// reported as malformed JSON.
func (a *API) ensureResourceClass(r *middleware.Request) (*middleware.Response, error) {
	name := r.Param("name")
	doc, err := middleware.ParseJSON([]byte(`{"name": "` + name + `"}`))
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := a.schemas.ResourceClassUpdate().Validate(doc); err != nil {
		return nil, apierror.BadRequest("JSON does not validate: %s", err)
	}
	_, created, err := a.store.EnsureResourceClass(r.Context(), name)
	if err != nil {
		return nil, err
	}
	return createdOrKept(r, created, resourceClassURL(name)), nil
}

// DeleteResourceClass is DELETE /resource_classes/{name} (1.2).
func (a *API) DeleteResourceClass(r *middleware.Request) (*middleware.Response, error) {
	if err := policyOnly(policy.ClassDelete).from(microversion.ResourceClasses).check(r); err != nil {
		return nil, err
	}
	err := a.store.DeleteResourceClass(r.Context(), r.Param("name"))
	switch {
	case errors.Is(err, store.ErrStandard):
		return nil, apierror.BadRequest("Error in delete resource class: %s", store.Detail(err))
	case errors.Is(err, store.ErrResourceClassInUse):
		return nil, apierror.Conflict(apierror.CodeDefault, "Error in delete resource class: %s", store.Detail(err))
	case err != nil:
		return nil, storeNotFound(err)
	}
	return middleware.NoContent(), nil
}
