package middleware

import (
	"time"

	"go.uber.org/zap"
)

// logRequest writes the request's log line.
func (c *Chain) logRequest(req *Request, status int, d time.Duration) {
	if ce := c.log.Check(zap.InfoLevel, "request"); ce != nil {
		ce.Write(
			zap.String("method", req.Method),
			zap.String("path", req.URL.Path),
			zap.Int("status", status),
			zap.String("microversion", req.loggedMicroversion()),
			zap.Duration("duration", d),
			zap.String("request_id", req.ID),
		)
	}
}

// loggedMicroversion is the negotiated microversion for the request log
// line, or "" when the request ended before negotiation (a 401) or
// negotiation failed (400, 406): "0.0" would read as a version.
func (r *Request) loggedMicroversion() string {
	if !r.Negotiated {
		return ""
	}
	return r.Version.String()
}
