package middleware

import (
	"net/http"
	"testing"
)

// TestHeaderAsWSGI: identity headers are read as upstream's WSGI server
// hands them over: spellings with "_" for "-" are the same header, and
// repeated values are joined with ", " (what the reference's uWSGI does,
// observed with duplicate X-Auth-Token and X-Project-Id headers).
func TestHeaderAsWSGI(t *testing.T) {
	cases := []struct {
		name  string
		h     http.Header
		value string
		ok    bool
	}{
		{"absent", http.Header{"X-Other": {"x"}}, "", false},
		{"empty", http.Header{"X-Roles": {""}}, "", true},
		{"one", http.Header{"X-Roles": {"admin"}}, "admin", true},
		{"repeated", http.Header{"X-Roles": {"reader", "admin"}}, "reader, admin", true},
		{"underscore", http.Header{"X_roles": {"admin"}}, "admin", true},
		{"both spellings", http.Header{"X_roles": {"admin"}, "X-Roles": {"reader"}}, "reader, admin", true},
		{"lower case underscore", http.Header{"x_ROLES": {"b"}, "X_roles": {"a"}}, "a, b", true},
		{"longer name", http.Header{"X-Roles-X": {"admin"}}, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := header(tc.h, "X-Roles")
			if v != tc.value || ok != tc.ok {
				t.Errorf("got %q %v, want %q %v", v, ok, tc.value, tc.ok)
			}
		})
	}
	h := http.Header{"X-Roles": {"a"}, "X_roles": {"b"}}
	if _, _ = header(h, "X-Roles"); len(h["X-Roles"]) != 1 {
		t.Errorf("the request's header was changed: %v", h)
	}
}
