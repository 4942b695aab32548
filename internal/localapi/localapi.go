// Package localapi is the plumbing shared by the agent's and the
// reconciler's local endpoints: one shared token checked before routing,
// JSON answers, and request bodies decoded strictly.
package localapi

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// MaxBody bounds a request body; local endpoints take small objects only.
const MaxBody = 1 << 16

// Style is how an endpoint writes its JSON answers.
type Style int

const (
	// Compact writes one line per answer.
	Compact Style = iota
	// Indented indents by two spaces, for answers people read with curl.
	Indented
)

// WriteJSON writes v as the answer with status.
func (s Style) WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	if s == Indented {
		enc.SetIndent("", "  ")
	}
	_ = enc.Encode(v) // the status is sent; a failed write has no one to tell
}

// WriteError writes {"error": msg} with status.
func (s Style) WriteError(w http.ResponseWriter, status int, msg string) {
	s.WriteJSON(w, status, map[string]string{"error": msg})
}

// Guard admits the requests that carry an endpoint's one token. There is
// no 403: the endpoint has one credential and no roles.
type Guard struct {
	// Token is the credential, compared in constant time. An empty token
	// admits nobody.
	Token string
	// Bearer also accepts the token as "Authorization: Bearer <token>"
	// (X-Auth-Token is always accepted).
	Bearer bool
	// Refusal is the error message of the 401 answer, written in Style.
	Refusal string
	Style   Style
}

// Wrap serves next only to admitted requests, refusing the others with
// 401 before routing.
func (g Guard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Auth-Token")
		if got == "" && g.Bearer {
			got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		if g.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(g.Token)) != 1 {
			g.Style.WriteError(w, http.StatusUnauthorized, g.Refusal)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ErrTrailingData is returned by DecodeJSON for a body that holds more
// than one JSON value.
var ErrTrailingData = errors.New("the body must hold one JSON object")

// DecodeJSON reads r's body, at most MaxBody bytes, into v. It refuses
// unknown fields and trailing data: one request is one object, and
// anything after it means a malformed body, not a second one to ignore.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ErrTrailingData
	}
	return nil
}

// StatusError is an endpoint's error answer as its client reads it.
type StatusError struct {
	Status int
	// Text is the answer's "error", or its body when it has none.
	Text string
}

func (e *StatusError) Error() string {
	s := strconv.Itoa(e.Status) + " " + http.StatusText(e.Status)
	if e.Text != "" {
		s += ": " + e.Text
	}
	return s
}

// ReadError is the StatusError of an answer with status and body that is
// not a success: the text of {"error": ...}, or the body itself (on one
// line) when it is not that JSON, e.g. net/http's answer to an unknown
// route.
func ReadError(status int, body []byte) *StatusError {
	var e struct {
		Error string `json:"error"`
	}
	text := strings.Join(strings.Fields(string(body)), " ")
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		text = e.Error
	}
	return &StatusError{Status: status, Text: text}
}
