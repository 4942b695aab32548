package middleware

import (
	"net/http"
	"strconv"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
)

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

// WriteError renders e as Placement's error JSON. The code appears only when
// a microversion >= 1.23 was negotiated; min/max versions only on a 406 from
// negotiation itself.
func WriteError(w http.ResponseWriter, req *Request, e *apierror.Error) {
	req.errCode = e.Code // for the metrics
	h := w.Header()
	b, ctype := errorBodyFor(req, e, func() []byte { return jsonErrorBody(req, e) })
	if req.Method == http.MethodHead {
		// webob answers HEAD with the bare exception: its default
		// content type and no body.
		b, ctype = nil, "text/html; charset=UTF-8"
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.Status)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// jsonErrorBody is Placement's JSON error document for e.
func jsonErrorBody(req *Request, e *apierror.Error) []byte {
	detail := stripTags(errorBodyText(e, noEscape))
	item := errorItem{Status: e.Status, Title: errorTitle(e.Status), Detail: detail, RequestID: req.ID}
	if req.Negotiated && req.Version.AtLeast(microversion.ErrorCodes) {
		item.Code = e.Code
		if item.Code == "" {
			item.Code = apierror.CodeDefault
		}
	}
	if e.Status == http.StatusNotAcceptable && !req.Negotiated {
		item.MaxVersion = req.MaxVersion().String()
		item.MinVersion = microversion.Min.String()
	}
	b, _ := jsonenc.Marshal(errorBody{Errors: []errorItem{item}})
	return b
}
