package middleware

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
)

// Response is what a handler returns on success; one writer
// (WriteResponse) turns it into bytes on the wire.
type Response struct {
	Status int
	Body   any // JSON-encoded when non-nil
	// LastModified, when non-zero, is sent with Cache-Control: no-cache
	// from microversion 1.15.
	LastModified time.Time
	Header       http.Header
	// Stream, when set, writes a JSON body too large to build in memory
	// first; it is sent chunked, without Content-Length, unless it fits
	// the one final write (StreamWriter.Last).
	Stream func(w *StreamWriter) error
}

// OK is a 200 with body.
func OK(body any) *Response { return &Response{Status: http.StatusOK, Body: body} }

// NoContent is a 204.
func NoContent() *Response { return &Response{Status: http.StatusNoContent} }

// WithLastModified sets the cache headers' time.
func (r *Response) WithLastModified(t time.Time) *Response {
	r.LastModified = t
	return r
}

// SetHeader sets a header of the answer.
func (r *Response) SetHeader(k, v string) *Response {
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.Header.Set(k, v)
	return r
}

// WriteResult writes a handler's answer: resp, or err. Handlers translate
// the store errors they expect into *apierror.Error; anything else is
// logged and becomes a generic 500, so no internal detail leaks, and a
// request whose client went away is a 499.
func WriteResult(w http.ResponseWriter, req *Request, resp *Response, err error) {
	if err == nil {
		WriteResponse(w, req, resp)
		return
	}
	if he, ok := apierror.As(err); ok {
		WriteError(w, req, he)
		return
	}
	if errors.Is(err, context.Canceled) {
		WriteError(w, req, apierror.Errorf(499, "client closed request"))
		return
	}
	if req.chain != nil {
		req.chain.log.Error("unexpected error", zap.Error(err), zap.String("request_id", req.ID),
			zap.String("method", req.Method), zap.String("path", req.URL.Path))
	}
	WriteError(w, req, apierror.Errorf(http.StatusInternalServerError, "An unexpected error occurred."))
}

// WriteResponse writes a successful answer.
func WriteResponse(w http.ResponseWriter, req *Request, resp *Response) {
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	if !resp.LastModified.IsZero() && req.Version.AtLeast(microversion.CacheHeaders) {
		h.Set("Last-Modified", resp.LastModified.UTC().Format(http.TimeFormat))
		h.Set("Cache-Control", "no-cache")
	}
	if resp.Stream != nil {
		h.Set("Content-Type", "application/json")
		if req.Method == http.MethodHead {
			w.WriteHeader(resp.Status)
			return
		}
		sw := &StreamWriter{w: w, status: resp.Status}
		// Once the first piece is sent, a failure (the client went away)
		// can only cut the body short.
		_ = resp.Stream(sw)
		sw.start()
		return
	}
	if resp.Body == nil {
		if resp.Status != http.StatusNoContent {
			h.Set("Content-Length", "0")
		}
		w.WriteHeader(resp.Status)
		return
	}
	b, err := encodeBody(resp.Body)
	if err != nil {
		WriteError(w, req, apierror.Errorf(http.StatusInternalServerError, "failed to encode response"))
		return
	}
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(resp.Status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// StreamWriter sends the status line with the first piece of a streamed
// body, so that a body produced in a single final write still goes out
// with Content-Length.
type StreamWriter struct {
	w       http.ResponseWriter
	status  int
	started bool
}

func (s *StreamWriter) start() {
	if !s.started {
		s.started = true
		s.w.WriteHeader(s.status)
	}
}

// Write sends a piece of the body; the rest follows chunked.
func (s *StreamWriter) Write(p []byte) (int, error) {
	s.start()
	return s.w.Write(p)
}

// Last sends the final piece of the body.
func (s *StreamWriter) Last(p []byte) error {
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
