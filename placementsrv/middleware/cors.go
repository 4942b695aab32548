package middleware

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// CORSOptions configures Cross-Origin Resource Sharing as oslo.middleware's
// CORS filter does for Placement; nil Options.CORS (or no origins) turns
// it off.
type CORSOptions struct {
	// AllowedOrigins are the origins ("https://horizon.example.com", or
	// "*") whose requests may be shared.
	AllowedOrigins []string
	// AllowCredentials sends Access-Control-Allow-Credentials: true.
	AllowCredentials bool
	// ExposeHeaders are listed in Access-Control-Expose-Headers.
	ExposeHeaders []string
	// MaxAge is Access-Control-Max-Age in seconds (0: not sent).
	MaxAge int
	// AllowMethods may be requested in a preflight (exact match).
	AllowMethods []string
	// AllowHeaders may be requested in a preflight, besides the simple
	// headers (case-insensitive).
	AllowHeaders []string
}

// DefaultCORSOptions are Placement's CORS defaults (oslo.middleware's,
// with the header and method lists Placement sets at start-up); the
// origin list is empty.
func DefaultCORSOptions() CORSOptions {
	return CORSOptions{
		AllowCredentials: true,
		ExposeHeaders:    []string{"X-Auth-Token", "X-Openstack-Request-Id", "X-Subject-Token", "X-Service-Token", "OpenStack-API-Version"},
		MaxAge:           3600,
		AllowMethods:     []string{"GET", "PUT", "POST", "DELETE", "PATCH"},
		AllowHeaders:     []string{"X-Auth-Token", "X-Openstack-Request-Id", "X-Identity-Status", "X-Roles", "X-Service-Catalog", "X-User-Id", "X-Tenant-Id", "OpenStack-API-Version"},
	}
}

// corsSimpleHeaders may always be requested.
var corsSimpleHeaders = []string{"ACCEPT", "ACCEPT-LANGUAGE", "CONTENT-TYPE", "CACHE-CONTROL", "CONTENT-LANGUAGE", "EXPIRES", "LAST-MODIFIED", "PRAGMA"}

// cors is the compiled configuration.
type cors struct {
	opts           CORSOptions
	permitted      []string // upper-cased allowed + simple headers
	exposeHeaders  string
	maxAge         string
	wildcardOrigin bool
}

func newCORS(o *CORSOptions) *cors {
	if o == nil || len(o.AllowedOrigins) == 0 {
		return nil
	}
	c := &cors{opts: *o, exposeHeaders: strings.Join(o.ExposeHeaders, ","), wildcardOrigin: slices.Contains(o.AllowedOrigins, "*")}
	for _, h := range o.AllowHeaders {
		c.permitted = append(c.permitted, strings.ToUpper(h))
	}
	c.permitted = append(c.permitted, corsSimpleHeaders...)
	if o.MaxAge != 0 {
		c.maxAge = strconv.Itoa(o.MaxAge)
	}
	return c
}

// origin returns the configured origin matching the request's Origin:
// itself, or "*" when that is allowed.
func (c *cors) origin(req *http.Request) (string, bool) {
	vs, ok := req.Header["Origin"]
	if !ok {
		return "", false
	}
	o := ""
	if len(vs) > 0 {
		o = vs[0]
	}
	if slices.Contains(c.opts.AllowedOrigins, o) {
		return o, true
	}
	if c.wildcardOrigin {
		return "*", true
	}
	return "", false
}

// preflight answers an OPTIONS request. Placement itself answers OPTIONS
// with an error, which the CORS filter always turns into an empty 200;
// the CORS headers are added only when origin, method and every requested
// header are allowed.
func (c *cors) preflight(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Content-Length", "0")
	defer w.WriteHeader(http.StatusOK)
	origin, ok := c.origin(req)
	if !ok {
		return
	}
	method, ok := header(req.Header, "Access-Control-Request-Method")
	if !ok || !slices.Contains(c.opts.AllowMethods, method) {
		return
	}
	var requested []string
	if v, ok := header(req.Header, "Access-Control-Request-Headers"); ok {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				requested = append(requested, part)
			}
		}
	}
	for _, r := range requested {
		if !slices.Contains(c.permitted, strings.ToUpper(r)) {
			return
		}
	}
	h.Set("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	if c.opts.AllowCredentials {
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if c.maxAge != "" {
		h.Set("Access-Control-Max-Age", c.maxAge)
	}
	h.Set("Access-Control-Allow-Methods", method)
	if len(requested) > 0 {
		h.Set("Access-Control-Allow-Headers", strings.Join(requested, ","))
	}
}

// wrap decorates the response to an actual (non-preflight) request from
// an allowed origin; other requests are passed through untouched.
func (c *cors) wrap(w http.ResponseWriter, req *http.Request) http.ResponseWriter {
	origin, ok := c.origin(req)
	if !ok {
		return w
	}
	return &corsWriter{ResponseWriter: w, c: c, origin: origin}
}

// corsWriter adds the CORS headers just before the status is written.
type corsWriter struct {
	http.ResponseWriter
	c       *cors
	origin  string
	written bool
}

func (cw *corsWriter) WriteHeader(code int) {
	if !cw.written {
		cw.written = true
		h := cw.Header()
		if _, done := h["Access-Control-Allow-Origin"]; !done {
			if v := h.Get("Vary"); v != "" {
				h.Set("Vary", v+",Origin")
			} else {
				h.Set("Vary", "Origin")
			}
			h.Set("Access-Control-Allow-Origin", cw.origin)
			if cw.c.opts.AllowCredentials {
				h.Set("Access-Control-Allow-Credentials", "true")
			}
			if cw.c.exposeHeaders != "" {
				h.Set("Access-Control-Expose-Headers", cw.c.exposeHeaders)
			}
		}
	}
	cw.ResponseWriter.WriteHeader(code)
}

func (cw *corsWriter) Write(b []byte) (int, error) {
	if !cw.written {
		cw.WriteHeader(http.StatusOK)
	}
	return cw.ResponseWriter.Write(b)
}
