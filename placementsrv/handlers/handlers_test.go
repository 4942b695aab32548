package handlers

import (
	"bytes"
	"net/http/httptest"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/middleware"
)

// fuzzRequest wraps a JSON body as a request at microversion 1.minor.
func fuzzRequest(body []byte, minor int) *middleware.Request {
	hr := httptest.NewRequest("PUT", "/resource_providers/x", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	return &middleware.Request{Request: hr, Version: microversion.Version{Major: 1, Minor: minor}, Negotiated: true}
}
