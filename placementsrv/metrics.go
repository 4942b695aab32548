package placementsrv

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// routeUnmatched labels requests whose path is in no route (404s), so
// that arbitrary paths never become label values.
const routeUnmatched = "unmatched"

// serverMetrics instruments HTTP requests. Labels are the route template
// ("/resource_providers/{uuid}"), never the raw path, a method from a
// fixed set and the status code: cardinality is bounded by the route table.
type serverMetrics struct {
	requests *prometheus.CounterVec   // route, method, code
	duration *prometheus.HistogramVec // route, method
	inFlight prometheus.Gauge
	// conflicts counts 409 placement.concurrent_update answers, whether
	// the handler saw the stale generation or the store's transaction did.
	conflicts *prometheus.CounterVec // route
	// endpoint is Options.MetricsHandler.
	endpoint http.Handler
}

func newServerMetrics(reg prometheus.Registerer) (*serverMetrics, error) {
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "http",
			Name:      "requests_total",
			Help:      "Placement API requests by route template, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: metrics.Namespace,
			Subsystem: "http",
			Name:      "request_duration_seconds",
			Help:      "Placement API request latency, from the first middleware to the last byte handed to the connection, by route template and method.",
			Buckets:   metrics.LatencyBuckets(),
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: metrics.Namespace,
			Subsystem: "http",
			Name:      "requests_in_flight",
			Help:      "Placement API requests being served.",
		}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: metrics.Namespace,
			Subsystem: "http",
			Name:      "generation_conflicts_total",
			Help:      "Placement API answers 409 placement.concurrent_update (a stale provider or consumer generation) by route template; clients are expected to re-read and retry.",
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight, m.conflicts} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observe records one finished request; errCode is the Placement error
// code of an error answer.
func (m *serverMetrics) observe(route, method string, status int, errCode string, d time.Duration) {
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
func (s *Server) routeLabel(req *request) string {
	rt := req.route
	if rt == nil {
		rt, _ = s.match(req.URL.Path)
	}
	if rt == nil {
		return routeUnmatched
	}
	return rt.template
}

// withMetricsEndpoint serves GET /metrics from h and everything else from
// next. The endpoint sits in front of the whole Placement middleware
// chain: it needs no token (a Prometheus scrape carries none), is not
// logged per scrape, and is not counted among API requests.
func withMetricsEndpoint(h, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == metrics.Path && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// inventoryCollector exports the inventory at scrape time from the
// store's read model, so a scrape costs no SQL and no per-provider call
// (openstack-exporter makes two or three API calls per provider). It
// writes two families: ours, summed per resource class, and
// openstack-exporter's openstack_placement_* per provider, for the
// dashboards operators already have. The latter's values are float64 from
// our database, without the exporter's float32 artifacts.
type inventoryCollector struct {
	store   store.SnapshotStore
	log     *zap.Logger
	timeout time.Duration
	compat  bool // export the openstack_placement_* family

	classCapacity, classUsed, classReserved, providers, aggregates *prometheus.Desc
	up, total, reserved, usage, ratio                              *prometheus.Desc
}

func newInventoryCollector(st store.SnapshotStore, log *zap.Logger, compat bool) *inventoryCollector {
	class := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "resource_class", name), help, []string{"resource_class"}, nil)
	}
	os := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("openstack_placement_resource_"+name, help, []string{"hostname", "resourcetype"}, nil)
	}
	return &inventoryCollector{
		store:   st,
		log:     log,
		timeout: 10 * time.Second,
		compat:  compat,

		classCapacity: class("capacity", "Schedulable capacity of a resource class over all providers: the sum of (total - reserved) * allocation_ratio."),
		classUsed:     class("used", "Amount of a resource class allocated to consumers over all providers."),
		classReserved: class("reserved", "Amount of a resource class reserved over all providers (a fully reserved inventory is unavailable, e.g. a node cleaning)."),
		providers: prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "", "resource_providers"),
			"Number of resource providers.", nil, nil),
		aggregates: prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "", "aggregates"),
			"Number of aggregates with at least one resource provider.", nil, nil),

		up: prometheus.NewDesc("openstack_placement_up", "Whether the Placement data could be read (1) or not (0), as openstack-exporter's.", nil, nil),
		total: os("total", "Inventory total of a resource class on a provider (hostname is the provider name), as openstack-exporter's. "+
			"Exported untyped: it is a gauge, but its name ends in _total."),
		reserved: os("reserved", "Inventory reserved of a resource class on a provider, as openstack-exporter's."),
		usage:    os("usage", "Amount of a resource class allocated on a provider, as openstack-exporter's."),
		ratio:    os("allocation_ratio", "Allocation ratio of a resource class on a provider, as openstack-exporter's."),
	}
}

// Describe implements prometheus.Collector.
func (c *inventoryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.classCapacity, c.classUsed, c.classReserved, c.providers, c.aggregates} {
		ch <- d
	}
	if c.compat {
		for _, d := range []*prometheus.Desc{c.up, c.total, c.reserved, c.usage, c.ratio} {
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector. It is called concurrently by
// scrapes; the snapshot it reads is immutable and shared.
func (c *inventoryCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	snap, err := c.store.Snapshot(ctx)
	if err != nil {
		c.log.Warn("inventory metrics: cannot read the store", zap.Error(err))
		if c.compat {
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		}
		return
	}
	if c.compat {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	}
	ch <- prometheus.MustNewConstMetric(c.providers, prometheus.GaugeValue, float64(len(snap.Providers)))
	aggs := 0
	for _, members := range snap.AggMembers {
		if len(members) > 0 {
			aggs++
		}
	}
	ch <- prometheus.MustNewConstMetric(c.aggregates, prometheus.GaugeValue, float64(aggs))
	c.collectClasses(ch, snap)
	if c.compat {
		c.collectProviders(ch, snap)
	}
}

// collectClasses sums per resource class; classes nobody has an
// inventory of are left out.
func (c *inventoryCollector) collectClasses(ch chan<- prometheus.Metric, snap *candidates.Snapshot) {
	for class, provs := range snap.ByClass {
		if len(provs) == 0 {
			continue
		}
		var capacity, used, reserved int64
		for _, pi := range provs {
			inv := snap.Providers[pi].Inventory(int32(class))
			capacity += inv.Capacity
			used += inv.Used
			reserved += inv.Reserved
		}
		name := snap.Classes[class]
		ch <- prometheus.MustNewConstMetric(c.classCapacity, prometheus.GaugeValue, float64(capacity), name)
		ch <- prometheus.MustNewConstMetric(c.classUsed, prometheus.GaugeValue, float64(used), name)
		ch <- prometheus.MustNewConstMetric(c.classReserved, prometheus.GaugeValue, float64(reserved), name)
	}
}

// collectProviders writes one series per provider and class, as
// openstack-exporter does. Provider names are unique, so hostname and
// resourcetype identify a series.
func (c *inventoryCollector) collectProviders(ch chan<- prometheus.Metric, snap *candidates.Snapshot) {
	for i := range snap.Providers {
		p := &snap.Providers[i]
		for _, inv := range p.Inventories {
			class := snap.Classes[inv.Class]
			ch <- prometheus.MustNewConstMetric(c.total, prometheus.UntypedValue, float64(inv.Total), p.Name, class)
			ch <- prometheus.MustNewConstMetric(c.reserved, prometheus.GaugeValue, float64(inv.Reserved), p.Name, class)
			ch <- prometheus.MustNewConstMetric(c.usage, prometheus.GaugeValue, float64(inv.Used), p.Name, class)
			ch <- prometheus.MustNewConstMetric(c.ratio, prometheus.GaugeValue, inv.AllocationRatio, p.Name, class)
		}
	}
}

// initMetrics registers the request metrics and the inventory collector.
func (s *Server) initMetrics(opts Options) error {
	reg := metrics.Private(opts.Registerer)
	m, err := newServerMetrics(reg)
	if err != nil {
		return fmt.Errorf("placementsrv: register metrics: %w", err)
	}
	if err := reg.Register(newInventoryCollector(opts.Store, s.log.Named("metrics"), !opts.OmitOpenStackMetrics)); err != nil {
		return fmt.Errorf("placementsrv: register inventory metrics: %w", err)
	}
	m.endpoint = opts.MetricsHandler
	s.metrics = m
	return nil
}

func (s *Server) requestStarted() {
	if s.metrics != nil {
		s.metrics.inFlight.Inc()
	}
}

func (s *Server) requestDone(req *request, status int, d time.Duration) {
	if s.metrics != nil {
		s.metrics.inFlight.Dec()
		s.metrics.observe(s.routeLabel(req), req.Method, status, req.errCode, d)
	}
}
