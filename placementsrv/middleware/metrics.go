package middleware

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// routeUnmatched labels requests whose path is in no route (404s), so
// that arbitrary paths never become label values.
const routeUnmatched = "unmatched"

// Metrics instruments HTTP requests. Labels are the route template
// ("/resource_providers/{uuid}"), never the raw path, a method from a
// fixed set and the status code: cardinality is bounded by the route table.
type Metrics struct {
	requests *prometheus.CounterVec   // route, method, code
	duration *prometheus.HistogramVec // route, method
	inFlight prometheus.Gauge
	// conflicts counts 409 placement.concurrent_update answers, whether
	// the handler saw the stale generation or the store's transaction did.
	conflicts *prometheus.CounterVec // route
}

// NewMetrics registers the request metrics with reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	s := metrics.NewSet("http")
	m := &Metrics{
		requests: s.CounterVec("requests_total", "Placement API requests by route template, method and status code.",
			"route", "method", "code"),
		duration: s.HistogramVec("request_duration_seconds",
			"Placement API request latency, from the first middleware to the last byte handed to the connection, by route template and method.",
			metrics.LatencyBuckets(), "route", "method"),
		inFlight: s.Gauge("requests_in_flight", "Placement API requests being served."),
		conflicts: s.CounterVec("generation_conflicts_total",
			"Placement API answers 409 placement.concurrent_update (a stale provider or consumer generation) by route template; clients are expected to re-read and retry.",
			"route"),
	}
	if err := s.Register(reg); err != nil {
		return nil, err
	}
	return m, nil
}

// observe records one finished request; errCode is the Placement error
// code of an error answer.
func (m *Metrics) observe(route, method string, status int, errCode string, d time.Duration) {
	method = methodLabel(method)
	m.requests.WithLabelValues(route, method, codeLabel(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(d.Seconds())
	if errCode == apierror.CodeConcurrentUpdate {
		m.conflicts.WithLabelValues(route).Inc()
	}
}

// codeLabel is strconv.Itoa without an allocation for the usual codes.
func codeLabel(status int) string {
	switch status {
	case http.StatusOK:
		return "200"
	case http.StatusCreated:
		return "201"
	case http.StatusNoContent:
		return "204"
	case http.StatusBadRequest:
		return "400"
	case http.StatusNotFound:
		return "404"
	case http.StatusConflict:
		return "409"
	}
	return strconv.Itoa(status)
}

// methodLabel keeps the method label bounded: a client may send any token
// as a method.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete,
		http.MethodHead, http.MethodPatch, http.MethodOptions:
		return m
	}
	return "other"
}

// routeLabel is the template of the route req matched. Requests stopped
// before dispatch (401, bad microversion) are matched here.
func (c *Chain) routeLabel(req *Request) string {
	if req.Route != "" {
		return req.Route
	}
	if t := c.next.Route(req.URL.Path); t != "" {
		return t
	}
	return routeUnmatched
}

// WithMetricsEndpoint serves GET /metrics from h and everything else from
// next. The endpoint sits in front of the whole Placement middleware
// chain: it needs no token (a Prometheus scrape carries none), is not
// logged per scrape, and is not counted among API requests.
func WithMetricsEndpoint(h, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == metrics.Path && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (c *Chain) requestStarted() {
	if m := c.opts.Metrics; m != nil {
		m.inFlight.Inc()
	}
}

func (c *Chain) requestDone(req *Request, status int, d time.Duration) {
	if m := c.opts.Metrics; m != nil {
		m.inFlight.Dec()
		m.observe(c.routeLabel(req), req.Method, status, req.errCode, d)
	}
}
