// Package inventorymetrics exports the resource gauges, per resource
// class and per provider, from the store's read model at scrape time.
package inventorymetrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Collector exports the inventory at scrape time from the store's read
// model, so a scrape costs no SQL and no per-provider call
// (openstack-exporter makes two or three API calls per provider). It
// writes two families: ours, summed per resource class, and
// openstack-exporter's openstack_placement_* per provider, for the
// dashboards operators already have. The latter's values are float64 from
// our database, without the exporter's float32 artifacts.
type Collector struct {
	store   store.SnapshotStore
	log     *zap.Logger
	timeout time.Duration
	compat  bool // export the openstack_placement_* family

	classCapacity, classUsed, classReserved, classHeldBack *prometheus.Desc
	providers, aggregates                                  *prometheus.Desc
	up, total, reserved, usage, ratio                      *prometheus.Desc
}

// New builds the collector over st; compat adds openstack-exporter's
// openstack_placement_* family. Scrape failures are logged to log.
func New(st store.SnapshotStore, log *zap.Logger, compat bool) *Collector {
	class := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "resource_class", name), help, []string{"resource_class"}, nil)
	}
	os := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("openstack_placement_resource_"+name, help, []string{"hostname", "resourcetype"}, nil)
	}
	return &Collector{
		store:   st,
		log:     log,
		timeout: 10 * time.Second,
		compat:  compat,

		classCapacity: class("capacity", "Schedulable capacity of a resource class over all providers: the sum of (total - reserved) * allocation_ratio."),
		classUsed:     class("used", "Amount of a resource class allocated to consumers over all providers."),
		classReserved: class("reserved", "Amount of a resource class reserved over all providers (a fully reserved inventory is unavailable, e.g. a node cleaning)."),
		classHeldBack: class("held_back", "Total of a resource class's inventories held back in full (reserved == total, e.g. a node cleaning or an FPGA being programmed) over all providers; part of reserved."),
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
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.classCapacity, c.classUsed, c.classReserved, c.classHeldBack, c.providers, c.aggregates} {
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
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
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
func (c *Collector) collectClasses(ch chan<- prometheus.Metric, snap *readmodel.Snapshot) {
	for class, provs := range snap.ByClass {
		if len(provs) == 0 {
			continue
		}
		var capacity, used, reserved, held int64
		for _, pi := range provs {
			inv := snap.Inventory(pi, int32(class))
			capacity += inv.Capacity
			used += inv.Used
			reserved += inv.Reserved
			if inv.Total > 0 && inv.Reserved >= inv.Total {
				held += inv.Total
			}
		}
		name := snap.Classes[class]
		ch <- prometheus.MustNewConstMetric(c.classCapacity, prometheus.GaugeValue, float64(capacity), name)
		ch <- prometheus.MustNewConstMetric(c.classUsed, prometheus.GaugeValue, float64(used), name)
		ch <- prometheus.MustNewConstMetric(c.classReserved, prometheus.GaugeValue, float64(reserved), name)
		ch <- prometheus.MustNewConstMetric(c.classHeldBack, prometheus.GaugeValue, float64(held), name)
	}
}

// collectProviders writes one series per provider and class, as
// openstack-exporter does. Provider names are unique, so hostname and
// resourcetype identify a series.
func (c *Collector) collectProviders(ch chan<- prometheus.Metric, snap *readmodel.Snapshot) {
	for i := range snap.Providers {
		p := &snap.Providers[i]
		for _, inv := range snap.Inventories(int32(i)) {
			class := snap.Classes[inv.Class]
			ch <- prometheus.MustNewConstMetric(c.total, prometheus.UntypedValue, float64(inv.Total), p.Name, class)
			ch <- prometheus.MustNewConstMetric(c.reserved, prometheus.GaugeValue, float64(inv.Reserved), p.Name, class)
			ch <- prometheus.MustNewConstMetric(c.usage, prometheus.GaugeValue, float64(inv.Used), p.Name, class)
			ch <- prometheus.MustNewConstMetric(c.ratio, prometheus.GaugeValue, inv.AllocationRatio, p.Name, class)
		}
	}
}
