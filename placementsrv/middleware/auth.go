package middleware

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/keystone"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
)

// TokenValidator checks a Keystone token; *keystone.Client is one.
// Errors wrap keystone.ErrInvalidToken (401) or anything else (503).
type TokenValidator interface {
	Validate(ctx context.Context, token string) (*keystone.Token, error)
}

// authenticate applies the auth strategy and fills req.Creds. The root
// is always open, as upstream. It writes the 401 or 503 itself and
// returns false when the request must stop.
func (c *Chain) authenticate(w http.ResponseWriter, req *Request) bool {
	if req.URL.Path == "/" || req.URL.Path == "" {
		// Upstream builds a context for the root too (from whatever
		// headers there are); nothing there is authorized.
		return true
	}
	if c.opts.Auth == "keystone" {
		return c.authenticateKeystone(w, req)
	}
	return authenticateNoAuth(w, req)
}

// authenticateNoAuth is upstream's NoAuthMiddleware followed by
// oslo.context's from_environ: X-Auth-Token is required and read as
// user[:project]; roles come from X-Roles, else "admin" for the user
// admin; the project is dropped under OpenStack-System-Scope; the other
// context headers (X-Project-Id, X-Domain-Id, ...) are taken as sent.
func authenticateNoAuth(w http.ResponseWriter, req *Request) bool {
	tok, present := header(req.Header, "X-Auth-Token")
	if !present {
		writeWebobError(w, req, &apierror.Error{Status: http.StatusUnauthorized})
		return false
	}
	user, project, _ := strings.Cut(tok, ":")
	if project == "" {
		project = user
	}
	h := req.Header
	c := &req.Creds
	c.UserID = policy.Str(user)
	var rolesHdr string
	if v, ok := header(h, "X-Roles"); ok {
		rolesHdr = v
	} else if user == "admin" {
		rolesHdr = "admin"
	}
	c.Roles = splitRoles(rolesHdr)
	tenant, tenantSet := header(h, "X-Tenant-Id")
	if sys, _ := header(h, "Openstack-System-Scope"); sys == "" {
		tenant, tenantSet = project, true
	}
	c.ProjectID = firstOf(h, tenant, tenantSet)
	c.SystemScope = opt(header(h, "Openstack-System-Scope"))
	c.DomainID = opt(header(h, "X-Domain-Id"))
	c.UserDomainID = opt(header(h, "X-User-Domain-Id"))
	c.ProjectDomainID = opt(header(h, "X-Project-Domain-Id"))
	c.IsAdminProject = true
	if v, ok := header(h, "X-Is-Admin-Project"); ok {
		c.IsAdminProject = strings.EqualFold(v, "true")
	}
	c.ServiceUserID = opt(header(h, "X-Service-User-Id"))
	c.ServiceUserDomainID = opt(header(h, "X-Service-User-Domain-Id"))
	c.ServiceProjectID = opt(header(h, "X-Service-Project-Id"))
	c.ServiceProjectDomainID = opt(header(h, "X-Service-Project-Domain-Id"))
	if v, ok := header(h, "X-Service-Roles"); ok {
		c.ServiceRoles = splitRoles(v)
	}
	return true
}

// firstOf is oslo.context's project_id: X-Project-Id, else X-Tenant-Id
// (as noauth2 left it), else X-Tenant; None when none is there.
func firstOf(h http.Header, tenant string, tenantSet bool) policy.Value {
	if v, ok := header(h, "X-Project-Id"); ok {
		return policy.Str(v)
	}
	if tenantSet {
		return policy.Str(tenant)
	}
	return opt(header(h, "X-Tenant"))
}

// header returns a request header as upstream's WSGI server (uWSGI)
// presents it: "_" and "-" in the name are the same, so X_Roles is
// X-Roles, and every value sent under any spelling is joined with ", ".
// ok says whether it was sent at all (an empty value counts). name is in
// Go's canonical form. Go keeps no order between spellings: the
// canonical one comes first, the others in sorted order.
func header(h http.Header, name string) (v string, ok bool) {
	vals, ok := h[name]
	var others []string
	for k := range h {
		if k != name && sameEnvironKey(k, name) {
			others = append(others, k)
		}
	}
	if !ok && len(others) == 0 {
		return "", false
	}
	if len(others) == 0 && len(vals) == 1 {
		return vals[0], true
	}
	slices.Sort(others)
	vals = slices.Clip(vals)
	for _, k := range others {
		vals = append(vals, h[k]...)
	}
	return strings.Join(vals, ", "), true
}

// sameEnvironKey reports whether two header names become the same WSGI
// environ key (HTTP_ + upper case, "-" as "_").
func sameEnvironKey(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if environByte(a[i]) != environByte(b[i]) {
			return false
		}
	}
	return true
}

func environByte(c byte) byte {
	switch {
	case c == '-':
		return '_'
	case 'a' <= c && c <= 'z':
		return c - 'a' + 'A'
	}
	return c
}

func opt(v string, ok bool) policy.Value { return policy.OptStr(v, ok) }

// splitRoles is oslo.context's role list: comma separated, each
// stripped; nothing for an empty header.
func splitRoles(s string) []string {
	if s == "" {
		return nil
	}
	roles := strings.Split(s, ",")
	for i, r := range roles {
		roles[i] = strings.TrimSpace(r)
	}
	return roles
}

// keystoneUnauthorizedBody is keystonemiddleware's 401 document.
const keystoneUnauthorizedBody = `{"error": {"code": 401, "title": "Unauthorized", "message": "The request you have made requires authentication."}}`

// authenticateKeystone validates X-Auth-Token (or X-Storage-Token) with
// Keystone, as keystonemiddleware's auth_token: identity headers a
// client sends are ignored, the credentials come from the token only. A
// service token (X-Service-Token, sent by a service acting for a user)
// is validated too and gives the service_* credentials; an invalid one
// is refused as an invalid user token is.
func (c *Chain) authenticateKeystone(w http.ResponseWriter, req *Request) bool {
	tok, ok := header(req.Header, "X-Auth-Token")
	if !ok {
		tok, _ = header(req.Header, "X-Storage-Token")
	}
	t, ok := c.validate(w, req, tok)
	if !ok {
		return false
	}
	cr := &req.Creds
	cr.UserID = policy.Str(t.UserID)
	cr.UserDomainID = nonEmpty(t.UserDomainID)
	cr.ProjectID = nonEmpty(t.ProjectID)
	cr.ProjectDomainID = nonEmpty(t.ProjectDomainID)
	cr.DomainID = nonEmpty(t.DomainID)
	if t.SystemAll {
		cr.SystemScope = policy.Str("all")
	} else {
		cr.SystemScope = policy.None()
	}
	cr.Roles = t.Roles
	cr.IsAdminProject = t.IsAdminProject
	if st, sent := header(req.Header, "X-Service-Token"); sent {
		svc, ok := c.validate(w, req, st)
		if !ok {
			return false
		}
		cr.ServiceUserID = policy.Str(svc.UserID)
		cr.ServiceUserDomainID = nonEmpty(svc.UserDomainID)
		cr.ServiceProjectID = nonEmpty(svc.ProjectID)
		cr.ServiceProjectDomainID = nonEmpty(svc.ProjectDomainID)
		cr.ServiceRoles = svc.Roles
	}
	return true
}

// validate asks Keystone about tok; on a refusal (401) or an outage
// (503) it writes the answer and returns false.
func (c *Chain) validate(w http.ResponseWriter, req *Request, tok string) (*keystone.Token, bool) {
	t, err := c.opts.Tokens.Validate(req.Context(), tok)
	switch {
	case err == nil:
		return t, true
	case errors.Is(err, keystone.ErrInvalidToken):
		h := w.Header()
		h.Set("WWW-Authenticate", `Keystone uri="`+c.opts.WWWAuthenticateURI+`"`)
		h.Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusUnauthorized)
		if req.Method != http.MethodHead {
			_, _ = w.Write([]byte(keystoneUnauthorizedBody))
		}
	default:
		c.log.Error("unable to validate token", zap.Error(err), zap.String("request_id", req.ID))
		writeWebobError(w, req, &apierror.Error{Status: http.StatusServiceUnavailable, Detail: "The Keystone service is temporarily unavailable."})
	}
	return nil, false
}

func nonEmpty(s string) policy.Value { return policy.OptStr(s, s != "") }

// writeWebobError writes a bare webob error, as upstream's middleware
// raises them outside Placement's JSON formatter: JSON
// {"message", "code", "title"}, HTML or plain text by the Accept header.
func writeWebobError(w http.ResponseWriter, req *Request, e *apierror.Error) {
	h := w.Header()
	// webob's default JSON formatter, not Placement's error document.
	b, ctype := errorBodyFor(req, e, func() []byte {
		return []byte(`{"message": ` + pyJSONString(errorBodyText(e, noEscape)) + `, "code": ` +
			pyJSONString(errorStatusLine(e.Status)) + `, "title": ` + pyJSONString(errorTitle(e.Status)) + `}`)
	})
	h.Set("Content-Type", ctype)
	w.WriteHeader(e.Status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// pyJSONString is Python json.dumps of a string: ASCII only.
func pyJSONString(s string) string { return string(jsonenc.AppendStringASCII(nil, s)) }
