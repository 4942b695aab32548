package localapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { Compact.WriteJSON(w, http.StatusOK, "in") })
	tests := []struct {
		name     string
		guard    Guard
		header   string
		value    string
		admitted bool
	}{
		{"token", Guard{Token: "s"}, "X-Auth-Token", "s", true},
		{"wrong token", Guard{Token: "s"}, "X-Auth-Token", "t", false},
		{"no token", Guard{Token: "s"}, "", "", false},
		{"empty token admits nobody", Guard{}, "X-Auth-Token", "", false},
		{"bearer refused by default", Guard{Token: "s"}, "Authorization", "Bearer s", false},
		{"bearer", Guard{Token: "s", Bearer: true}, "Authorization", "Bearer s", true},
		{"wrong bearer", Guard{Token: "s", Bearer: true}, "Authorization", "Bearer t", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.guard.Refusal = "no entry"
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tt.header != "" {
				req.Header.Set(tt.header, tt.value)
			}
			rec := httptest.NewRecorder()
			tt.guard.Wrap(ok).ServeHTTP(rec, req)
			if admitted := rec.Code == http.StatusOK; admitted != tt.admitted {
				t.Fatalf("status %d %s, want admitted %v", rec.Code, rec.Body, tt.admitted)
			}
			if !tt.admitted && (rec.Code != http.StatusUnauthorized || rec.Body.String() != "{\"error\":\"no entry\"}\n") {
				t.Fatalf("refusal %d %q", rec.Code, rec.Body)
			}
		})
	}
}

func TestStyle(t *testing.T) {
	for _, tc := range []struct {
		style Style
		want  string
	}{
		{Compact, "{\"error\":\"x\"}\n"},
		{Indented, "{\n  \"error\": \"x\"\n}\n"},
	} {
		rec := httptest.NewRecorder()
		tc.style.WriteError(rec, http.StatusTeapot, "x")
		if rec.Code != http.StatusTeapot || rec.Body.String() != tc.want || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("style %d: %d %q %v", tc.style, rec.Code, rec.Body, rec.Header())
		}
	}
}

func TestDecodeJSON(t *testing.T) {
	type body struct {
		A string `json:"a"`
	}
	for _, tc := range []struct {
		name, body string
		ok         bool
		wantErr    string
	}{
		{"one object", `{"a":"x"}`, true, ""},
		{"trailing space", "{\"a\":\"x\"}\n ", true, ""},
		{"unknown field", `{"b":"x"}`, false, `unknown field "b"`},
		{"trailing object", `{"a":"x"} {"a":"y"}`, false, "one JSON object"},
		{"malformed", `{"a":`, false, "unexpected EOF"},
		{"empty", ``, false, "EOF"},
		{"too large", `{"a":"` + strings.Repeat("x", MaxBody) + `"}`, false, "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v body
			req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			err := DecodeJSON(httptest.NewRecorder(), req, &v)
			if tc.ok {
				if err != nil || v.A != "x" {
					t.Fatalf("DecodeJSON = %v, %+v", err, v)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("DecodeJSON = %v, want an error containing %q", err, tc.wantErr)
			}
			if tc.name == "trailing object" && !errors.Is(err, ErrTrailingData) {
				t.Fatalf("trailing data: %v is not ErrTrailingData", err)
			}
			if tc.name == "empty" && !errors.Is(err, io.EOF) {
				t.Fatalf("empty body: %v is not io.EOF", err)
			}
		})
	}
}

// TestReadError: a client reads the error answer's text, or the body
// itself when it is not {"error": ...}.
func TestReadError(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"error":"unknown device: 0000:ff:00.0","result":""}` + "\n", "404 Not Found: unknown device: 0000:ff:00.0"},
		{"404 page not found\n", "404 Not Found: 404 page not found"},
		{"", "404 Not Found"},
	}
	for _, tt := range tests {
		if got := ReadError(http.StatusNotFound, []byte(tt.body)).Error(); got != tt.want {
			t.Errorf("ReadError(404, %q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
