package placementsrv

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
)

// response is what a handler returns on success; one writer (writeResponse)
// turns it into bytes on the wire.
type response struct {
	status int
	body   any // JSON-encoded when non-nil
	// lastModified, when non-zero, is sent with Cache-Control: no-cache
	// from microversion 1.15.
	lastModified time.Time
	header       http.Header
	// stream, when set, writes a JSON body too large to build in memory
	// first; it is sent chunked, without Content-Length, unless it fits
	// the one final write (streamWriter.Last).
	stream func(w *streamWriter) error
}

func ok(body any) *response { return &response{status: http.StatusOK, body: body} }

func noContent() *response { return &response{status: http.StatusNoContent} }

// withLastModified sets the cache headers' time.
func (r *response) withLastModified(t time.Time) *response {
	r.lastModified = t
	return r
}

func (r *response) setHeader(k, v string) *response {
	if r.header == nil {
		r.header = http.Header{}
	}
	r.header.Set(k, v)
	return r
}

// writeResponse writes a successful answer.
func writeResponse(w http.ResponseWriter, req *request, resp *response) {
	h := w.Header()
	for k, vs := range resp.header {
		h[k] = vs
	}
	if !resp.lastModified.IsZero() && req.mv.AtLeast(microversion.CacheHeaders) {
		h.Set("Last-Modified", resp.lastModified.UTC().Format(http.TimeFormat))
		h.Set("Cache-Control", "no-cache")
	}
	if resp.stream != nil {
		h.Set("Content-Type", "application/json")
		if req.Method == http.MethodHead {
			w.WriteHeader(resp.status)
			return
		}
		sw := &streamWriter{w: w, status: resp.status}
		// Once the first piece is sent, a failure (the client went away)
		// can only cut the body short.
		_ = resp.stream(sw)
		sw.start()
		return
	}
	if resp.body == nil {
		if resp.status != http.StatusNoContent {
			h.Set("Content-Length", "0")
		}
		w.WriteHeader(resp.status)
		return
	}
	b, err := encodeBody(resp.body)
	if err != nil {
		writeError(w, req, apierror.Errorf(http.StatusInternalServerError, "failed to encode response"))
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(resp.status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// streamWriter sends the status line with the first piece of a streamed
// body, so that a body produced in a single final write still goes out
// with Content-Length.
type streamWriter struct {
	w       http.ResponseWriter
	status  int
	started bool
}

func (s *streamWriter) start() {
	if !s.started {
		s.started = true
		s.w.WriteHeader(s.status)
	}
}

// Write sends a piece of the body; the rest follows chunked.
func (s *streamWriter) Write(p []byte) (int, error) {
	s.start()
	return s.w.Write(p)
}

// Last sends the final piece of the body.
func (s *streamWriter) Last(p []byte) error {
	if !s.started {
		s.w.Header().Set("Content-Length", strconv.Itoa(len(p)))
	}
	_, err := s.Write(p)
	return err
}

// encodeBody encodes a response body; jsonenc.Raw is already encoded.
func encodeBody(body any) ([]byte, error) {
	if raw, ok := body.(jsonenc.Raw); ok {
		return raw, nil
	}
	return jsonenc.Marshal(body)
}

var (
	brRE      = regexp.MustCompile(`(?i)<br.*?>`)
	commentRE = regexp.MustCompile(`(?s)<!--|-->`)
	tagRE     = regexp.MustCompile(`(?s)<.*?>`)
)

// stripTags mirrors webob's strip_tags, which upstream's error bodies pass
// through: newlines become spaces and <br> becomes a newline.
func stripTags(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "\r", "")
	s = brRE.ReplaceAllString(s, "\n")
	s = commentRE.ReplaceAllString(s, "")
	s = tagRE.ReplaceAllString(s, "")
	return s
}

// errorBody is Placement's error document.
type errorBody struct {
	Errors []errorItem `json:"errors"`
}

type errorItem struct {
	Status     int    `json:"status"`
	Title      string `json:"title"`
	Detail     string `json:"detail"`
	Code       string `json:"code,omitempty"`
	RequestID  string `json:"request_id,omitempty"`
	MaxVersion string `json:"max_version,omitempty"`
	MinVersion string `json:"min_version,omitempty"`
}

// writeError renders e as Placement's error JSON. The code appears only when
// a microversion >= 1.23 was negotiated; min/max versions only on a 406 from
// negotiation itself.
func writeError(w http.ResponseWriter, req *request, e *apierror.Error) {
	req.errCode = e.Code // for the metrics
	h := w.Header()
	b, ctype := errorBodyFor(req, e, func() []byte { return jsonErrorBody(req, e) })
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// jsonErrorBody is Placement's JSON error document for e.
func jsonErrorBody(req *request, e *apierror.Error) []byte {
	detail := stripTags(errorBodyText(e, noEscape))
	item := errorItem{Status: e.Status, Title: errorTitle(e.Status), Detail: detail, RequestID: req.id}
	if req.mvSet && req.mv.AtLeast(microversion.ErrorCodes) {
		item.Code = e.Code
		if item.Code == "" {
			item.Code = apierror.CodeDefault
		}
	}
	if e.Status == http.StatusNotAcceptable && !req.mvSet {
		item.MaxVersion = req.maxVersion().String()
		item.MinVersion = microversion.Min.String()
	}
	b, _ := jsonenc.Marshal(errorBody{Errors: []errorItem{item}})
	return b
}

// errorBodyFor renders e in the format the client's Accept header picks,
// as webob does: HTML, plain text, or the JSON that jsonBody builds.
func errorBodyFor(req *request, e *apierror.Error, jsonBody func() []byte) (body []byte, contentType string) {
	switch errorFormat(req.Header.Values("Accept")) {
	case "html":
		return []byte(htmlErrorBody(e)), "text/html; charset=UTF-8"
	case "plain":
		return []byte(errorStatusLine(e.Status) + "\n\n" + stripTags(errorBodyText(e, noEscape))), "text/plain; charset=UTF-8"
	default:
		return jsonBody(), "application/json"
	}
}
