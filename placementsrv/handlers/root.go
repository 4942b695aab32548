package handlers

import (
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
)

type versionDoc struct {
	ID         string `json:"id"`
	MaxVersion string `json:"max_version"`
	MinVersion string `json:"min_version"`
	Status     string `json:"status"`
	Links      []link `json:"links"`
}

// Home is the version document; its self link is deliberately relative.
func (a *API) Home(r *middleware.Request) (*middleware.Response, error) {
	doc := map[string][]versionDoc{"versions": {{
		ID:         "v" + microversion.Min.String(),
		MaxVersion: r.MaxVersion().String(),
		MinVersion: microversion.Min.String(),
		Status:     "CURRENT",
		Links:      []link{{Rel: "self", Href: ""}},
	}}}
	return middleware.OK(doc).WithLastModified(a.now()), nil
}
