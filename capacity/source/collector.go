package source

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/capacity/count"
	"github.com/placement-syncd/placement-syncd/metrics"
	"github.com/placement-syncd/placement-syncd/placementsrv/readmodel"
)

// Snapshots is where the read model comes from (the store).
type Snapshots interface {
	Snapshot(ctx context.Context) (*readmodel.Snapshot, error)
}

// CollectorOptions choose the optional families.
type CollectorOptions struct {
	// PerHost adds placement_syncd_flavor_capacity_host.
	PerHost bool
	// OSCapacity adds os-capacity's two families.
	OSCapacity bool
}

// Collector exports capacity by flavor at scrape time: one count of every
// flavor over the store's current snapshot and the Source's last good
// read of Nova. It makes no API call.
type Collector struct {
	snaps Snapshots
	src   *Source
	opts  CollectorOptions
	log   *zap.Logger

	capacity, heldBack, host, untranslatable, aggInfo *prometheus.Desc
	osTotal, osHypervisor                             *prometheus.Desc
}

// NewCollector builds the collector; scrape failures go to log.
func NewCollector(snaps Snapshots, src *Source, opts CollectorOptions, log *zap.Logger) *Collector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(metrics.Namespace, "", name), help, labels, nil)
	}
	return &Collector{
		snaps: snaps, src: src, opts: opts, log: log,
		capacity: desc("flavor_capacity", "How many more instances of a Nova flavor fit, counted exactly from the read model: "+
			`scope "cloud", "zone:<availability zone>" or "aggregate:<aggregate uuid>".`, "flavor", "scope"),
		heldBack: desc("flavor_capacity_held_back", "How many more instances of a flavor would fit once the providers held back "+
			"(reserved == total) for reason were released.", "flavor", "reason"),
		host: desc("flavor_capacity_host", "How many more instances of a flavor fit on a host (root provider name); "+
			"hosts with room only (capacity.per_host).", "flavor", "host"),
		untranslatable: desc("flavor_untranslatable", "1 for a Nova flavor whose scheduler request cannot be built, with the reason; "+
			"it has no capacity series.", "flavor", "reason"),
		aggInfo: desc("capacity_aggregate_info", "1 per Nova aggregate capacity by flavor knows: its name and availability zone "+
			`("" if none), to name the aggregate:<uuid> scopes.`, "aggregate", "name", "zone"),
		osTotal: prometheus.NewDesc("openstack_free_capacity_by_flavor_total",
			"Free capacity if you fill the cloud full of each flavor, as os-capacity's (exact count).", []string{"flavor_name", "public"}, nil),
		osHypervisor: prometheus.NewDesc("openstack_free_capacity_hypervisor_by_flavor",
			"Free capacity for each hypervisor if you fill remaining space full of each flavor, as os-capacity's (exact count).",
			[]string{"hypervisor", "flavor_name", "az_aggregate", "project_aggregate"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.capacity, c.heldBack, c.untranslatable, c.aggInfo} {
		ch <- d
	}
	if c.opts.PerHost {
		ch <- c.host
	}
	if c.opts.OSCapacity {
		ch <- c.osTotal
		ch <- c.osHypervisor
	}
}

// Collect implements prometheus.Collector. Before Nova's first good read
// it writes nothing.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snap, err := c.snaps.Snapshot(ctx)
	if err != nil {
		c.log.Warn("capacity metrics: cannot read the store", zap.Error(err))
		return
	}
	in, ok := c.src.Input(snap)
	if !ok {
		return
	}
	// Without per-host series the host lists are most of the count's
	// cost: leave them out.
	in.NoHosts = !c.opts.PerHost && !c.opts.OSCapacity
	rep := count.Count(in)
	for uuid, a := range in.Aggregates {
		ch <- prometheus.MustNewConstMetric(c.aggInfo, prometheus.GaugeValue, 1, uuid, a.Name, a.Zone)
	}
	for i := range rep.Flavors {
		c.collectFlavor(ch, &rep.Flavors[i])
	}
	if c.opts.OSCapacity {
		c.collectOSCapacity(ch, rep, in.Aggregates)
	}
}

// collectFlavor writes one flavor's series.
func (c *Collector) collectFlavor(ch chan<- prometheus.Metric, f *count.Flavor) {
	gauge := func(d *prometheus.Desc, v int64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), labels...)
	}
	if f.Err != "" {
		gauge(c.untranslatable, 1, f.Name, f.Err)
		return
	}
	gauge(c.capacity, f.Cloud, f.Name, ScopeCloud)
	for z, n := range f.Zones {
		gauge(c.capacity, n, f.Name, ScopeZone+z)
	}
	for a, n := range f.Aggregates {
		gauge(c.capacity, n, f.Name, ScopeAggregate+a)
	}
	for reason, n := range f.HeldBack {
		gauge(c.heldBack, n, f.Name, reason)
	}
	if c.opts.PerHost {
		for _, h := range f.Hosts {
			if h.Count > 0 {
				gauge(c.host, h.Count, f.Name, h.Name)
			}
		}
	}
}

// The scope label's values.
const (
	ScopeCloud     = "cloud"
	ScopeZone      = "zone:"
	ScopeAggregate = "aggregate:"
)

// collectOSCapacity writes os-capacity's families with its label
// values: public is Python's "True" or "False"; a hypervisor is a root
// provider with room, az_aggregate the zone of its aggregates ("" for
// none: os-capacity does not name the default zone) and
// project_aggregate the name of its tenant-isolated aggregate, "multiple"
// when several. Untranslatable flavors, which os-capacity would count
// with its own request, are left out.
func (c *Collector) collectOSCapacity(ch chan<- prometheus.Metric, rep count.Report, aggs map[string]count.Aggregate) {
	for i := range rep.Flavors {
		f := &rep.Flavors[i]
		if f.Err != "" {
			continue
		}
		public := "False"
		if f.Public {
			public = "True"
		}
		ch <- prometheus.MustNewConstMetric(c.osTotal, prometheus.GaugeValue, float64(f.Cloud), f.Name, public)
		for _, h := range f.Hosts {
			if h.Count == 0 {
				continue
			}
			az, project := osCapacityAggregates(h.Aggregates, aggs)
			ch <- prometheus.MustNewConstMetric(c.osHypervisor, prometheus.GaugeValue, float64(h.Count), h.Name, f.Name, az, project)
		}
	}
}

// osCapacityAggregates is os-capacity's az_aggregate and
// project_aggregate of a host in aggregates hostAggs.
func osCapacityAggregates(hostAggs []string, aggs map[string]count.Aggregate) (az, project string) {
	for _, u := range hostAggs {
		a, ok := aggs[u]
		if !ok {
			continue
		}
		if a.Zone != "" {
			az = a.Zone
		}
		if len(a.Projects) > 0 {
			if project == "" {
				project = a.Name
			} else {
				project = "multiple"
			}
		}
	}
	return az, project
}
