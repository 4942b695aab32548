package placementsrv

import (
	"errors"
	"net/http"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
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

// requireResourceClassesAPI is upstream's 1.2 version gate: a plain 404
// before anything else is looked at.
func requireResourceClassesAPI(r *request) *apierror.Error {
	if !r.at(microversion.ResourceClasses) {
		return apierror.NotFound("")
	}
	return nil
}

// resourceClassNotFound maps a store miss to the 404 upstream's wrapper
// makes of its NotFound exception.
func resourceClassNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierror.NotFound("%s", store.Detail(err))
	}
	return err
}

func (s *Server) listResourceClasses(r *request) (*response, error) {
	if herr := requireResourceClassesAPI(r); herr != nil {
		return nil, herr
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyClassList); err != nil {
		return nil, err
	}
	rcs, err := s.store.ListResourceClasses(r.Context())
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
		modified = s.now()
	}
	return ok(map[string]any{"resource_classes": out}).withLastModified(modified), nil
}

func (s *Server) getResourceClass(r *request) (*response, error) {
	if herr := requireResourceClassesAPI(r); herr != nil {
		return nil, herr
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyClassShow); err != nil {
		return nil, err
	}
	rc, err := s.store.GetResourceClass(r.Context(), r.param("name"))
	if err != nil {
		return nil, resourceClassNotFound(err)
	}
	modified := lastModified(rc.CreatedAt, rc.UpdatedAt)
	if modified.IsZero() {
		modified = s.now()
	}
	return ok(serializeResourceClass(rc.Name)).withLastModified(modified), nil
}

func (s *Server) createResourceClass(r *request) (*response, error) {
	if herr := requireResourceClassesAPI(r); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyClassCreate); err != nil {
		return nil, err
	}
	doc, err := r.decodeJSON(s.schemas.ResourceClassCreate())
	if err != nil {
		return nil, err
	}
	name, _ := doc.(map[string]any)["name"].(string)
	if _, err := s.store.CreateResourceClass(r.Context(), name); err != nil {
		if errors.Is(err, store.ErrDuplicate) {
			return nil, apierror.Conflict(apierror.CodeDefault, "Conflicting resource class already exists: %s", name)
		}
		return nil, err
	}
	resp := &response{status: http.StatusCreated}
	resp.setHeader("Location", absoluteURL(r, resourceClassURL(name)))
	return resp, nil
}

func (s *Server) updateResourceClass(r *request) (*response, error) {
	if herr := requireResourceClassesAPI(r); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyClassUpdate); err != nil {
		return nil, err
	}
	if r.at(microversion.ResourceClassPut) {
		return s.ensureResourceClass(r)
	}
	return s.renameResourceClass(r)
}

// renameResourceClass is PUT with a body at 1.2–1.6.
func (s *Server) renameResourceClass(r *request) (*response, error) {
	name := r.param("name")
	doc, err := r.decodeJSON(s.schemas.ResourceClassUpdate())
	if err != nil {
		return nil, err
	}
	newName, _ := doc.(map[string]any)["name"].(string)
	rc, err := s.store.RenameResourceClass(r.Context(), name, newName)
	switch {
	case errors.Is(err, store.ErrDuplicate):
		return nil, apierror.Conflict(apierror.CodeDefault, "Resource class already exists: %s", newName)
	case errors.Is(err, store.ErrStandard):
		return nil, apierror.BadRequest("Cannot update standard resource class %s", name)
	case err != nil:
		return nil, resourceClassNotFound(err)
	}
	return ok(serializeResourceClass(rc.Name)), nil
}

// ensureResourceClass is the bodiless PUT of 1.7: 201 when created, 204
// when it already existed. Like upstream, the name is validated by
// splicing it into a JSON document, so a name that breaks the document is
// reported as malformed JSON.
func (s *Server) ensureResourceClass(r *request) (*response, error) {
	name := r.param("name")
	doc, err := parseJSON([]byte(`{"name": "` + name + `"}`))
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if err := s.schemas.ResourceClassUpdate().Validate(doc); err != nil {
		return nil, apierror.BadRequest("JSON does not validate: %s", err)
	}
	_, created, err := s.store.EnsureResourceClass(r.Context(), name)
	if err != nil {
		return nil, err
	}
	resp := noContent()
	if created {
		resp.status = http.StatusCreated
	}
	resp.setHeader("Location", absoluteURL(r, resourceClassURL(name)))
	return resp, nil
}

func (s *Server) deleteResourceClass(r *request) (*response, error) {
	if herr := requireResourceClassesAPI(r); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyClassDelete); err != nil {
		return nil, err
	}
	err := s.store.DeleteResourceClass(r.Context(), r.param("name"))
	switch {
	case errors.Is(err, store.ErrStandard):
		return nil, apierror.BadRequest("Error in delete resource class: %s", store.Detail(err))
	case errors.Is(err, store.ErrResourceClassInUse):
		return nil, apierror.Conflict(apierror.CodeDefault, "Error in delete resource class: %s", store.Detail(err))
	case err != nil:
		return nil, resourceClassNotFound(err)
	}
	return noContent(), nil
}
