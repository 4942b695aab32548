package placementsrv

import "github.com/placement-syncd/placement-syncd/placementsrv/microversion"

type versionDoc struct {
	ID         string `json:"id"`
	MaxVersion string `json:"max_version"`
	MinVersion string `json:"min_version"`
	Status     string `json:"status"`
	Links      []link `json:"links"`
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// home is the version document; its self link is deliberately relative.
func (s *Server) home(r *request) (*response, error) {
	doc := map[string][]versionDoc{"versions": {{
		ID:         "v" + microversion.Min.String(),
		MaxVersion: s.maxMV.String(),
		MinVersion: microversion.Min.String(),
		Status:     "CURRENT",
		Links:      []link{{Rel: "self", Href: ""}},
	}}}
	return ok(doc).withLastModified(s.now()), nil
}
