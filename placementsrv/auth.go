package placementsrv

import (
	"net/http"
	"strings"
)

// unauthorizedBody is webob's default JSON 401 body, which upstream sends
// unformatted because its auth middleware has no JSON formatter.
const unauthorizedBody = `{"message": "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.<br /><br />\n\n\n", "code": "401 Unauthorized", "title": "Unauthorized"}`

// authenticate applies the auth strategy. With noauth2, as upstream: the
// root is open; elsewhere X-Auth-Token is required and read as
// user[:project]; roles come from X-Roles, else "admin" for user admin.
// It writes the 401 itself and returns false when the request must stop.
func (s *Server) authenticate(w http.ResponseWriter, req *request) bool {
	if req.URL.Path == "/" || req.URL.Path == "" {
		return true
	}
	token, present := req.Header["X-Auth-Token"]
	if !present {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(unauthorizedBody))
		return false
	}
	tok := ""
	if len(token) > 0 {
		tok = token[0]
	}
	user, project, _ := strings.Cut(tok, ":")
	if project == "" {
		project = user
	}
	req.user, req.project = user, project
	if roles, ok := req.Header["X-Roles"]; ok {
		req.roles = strings.Split(strings.Join(roles, ","), ",")
	} else if user == "admin" {
		req.roles = []string{"admin"}
	}
	return true
}
