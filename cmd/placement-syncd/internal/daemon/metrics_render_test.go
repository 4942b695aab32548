package daemon

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// family is one metric family as the reference lists it.
type family struct {
	name, typ, help string
	labels          []string
}

// gatherFamilies describes every collector (so that a vector without a
// series is listed too) and gathers reg, which gives the types of the
// families that have series and the families registered without rec
// (build_info, the Go and process collectors, the /metrics handler's).
func gatherFamilies(collectors []prometheus.Collector, reg prometheus.Gatherer) (map[string]*family, error) {
	fams := map[string]*family{}
	for _, c := range collectors {
		ch := make(chan *prometheus.Desc)
		go func() {
			c.Describe(ch)
			close(ch)
		}()
		for d := range ch {
			f, err := parseDesc(d)
			if err != nil {
				return nil, err
			}
			f.typ = vectorType(c)
			fams[f.name] = f
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather: %w", err)
	}
	for _, mf := range mfs {
		f, ok := fams[mf.GetName()]
		if !ok {
			f = &family{name: mf.GetName(), help: mf.GetHelp()}
			for _, lp := range mf.GetMetric()[0].GetLabel() {
				f.labels = append(f.labels, lp.GetName())
			}
			fams[f.name] = f
		}
		f.typ = strings.ToLower(mf.GetType().String())
	}
	return fams, nil
}

// vectorType is the type of a vector, whose Describe is all there is of
// it before its first series; "" for any other collector, whose type the
// gathering gives.
func vectorType(c prometheus.Collector) string {
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	return ""
}

func untypedFamilies(fams map[string]*family) []string {
	var out []string
	for name, f := range fams {
		if f.typ == "" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// descRE reads Desc.String(), the one public view of a Desc's parts:
// Desc{fqName: "n", help: "h", unit: "u", constLabels: {a="x"},
// variableLabels: {b,c(d)}} (unit since client_golang 1.24).
var (
	descRE       = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"),(?: unit: "(?:[^"\\]|\\.)*",)? constLabels: \{(.*)\}, variableLabels: \{(.*)\}\}$`)
	constLabelRE = regexp.MustCompile(`(\w+)="(?:[^"\\]|\\.)*"`)
)

func parseDesc(d *prometheus.Desc) (*family, error) {
	m := descRE.FindStringSubmatch(d.String())
	if m == nil {
		return nil, fmt.Errorf("unreadable descriptor %s", d)
	}
	name, err1 := strconv.Unquote(m[1])
	help, err2 := strconv.Unquote(m[2])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("unreadable descriptor %s", d)
	}
	f := &family{name: name, help: help}
	if m[4] != "" {
		for _, l := range strings.Split(m[4], ",") {
			f.labels = append(f.labels, strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"))
		}
	}
	for _, cl := range constLabelRE.FindAllStringSubmatch(m[3], -1) {
		f.labels = append(f.labels, cl[1])
	}
	return f, nil
}

// components are the reference's sections, in order, each with the name
// prefixes of its families; the first match wins.
var components = []struct {
	title, about string
	prefixes     []string
}{
	{"API and middleware", "The Placement API's requests (placementsrv/middleware) and the `OWNER_NOVA` pre-filter.",
		[]string{"placement_syncd_http_", "placement_syncd_candidates_"}},
	{"Change feed", "Replicas on one MySQL or MariaDB database following each other's writes (placementsrv/ledger's replica, the consistent reads).",
		[]string{"placement_syncd_store_feed_"}},
	{"Store and ledger", "Write transactions and the read model (placementsrv/ledger).",
		[]string{"placement_syncd_store_"}},
	{"Inventory", "Read from the read model at scrape time (placementsrv/inventorymetrics); the `openstack_placement_*` families only with `metrics.openstack_compat` (the default).",
		[]string{"placement_syncd_resource_", "placement_syncd_aggregates", "openstack_placement_"}},
	{"Capacity by flavor", "How many more of each Nova flavor fit, counted from the read model at scrape time (capacity/source, capacity/count), only with `capacity.enabled`; " +
		"`placement_syncd_flavor_capacity_host` only with `capacity.per_host`, the `openstack_free_capacity_*` families only with `capacity.os_capacity_metrics`.",
		[]string{"placement_syncd_flavor_", "placement_syncd_capacity_", "openstack_free_capacity_"}},
	{"Agent", "The agent and its drivers, in `placement-syncd agent` or inside serve.",
		[]string{"placement_syncd_agent_"}},
	{"Reconciler", "Jobs, the OWNER_NOVA gate, the audit and the leader election among replicas.",
		[]string{"placement_syncd_reconciler_", "placement_syncd_audit_"}},
	{"Build, release, process and the /metrics endpoint", "What the binary is, the Placement release the API follows (and whether it changed by default), and the client library's own families.",
		[]string{"placement_syncd_build_", "placement_syncd_api_release_", "promhttp_"}},
}

// collapsed are the standard collectors, listed as one line each.
var collapsed = []struct{ prefix, about string }{
	{"go_", "the Go runtime (client_golang's Go collector): memory, garbage collection, goroutines, threads"},
	{"process_", "the process (client_golang's process collector): CPU time, memory, open file descriptors, start time"},
}

func componentOf(name string) int {
	for i, c := range components {
		for _, p := range c.prefixes {
			if strings.HasPrefix(name, p) {
				return i
			}
		}
	}
	if strings.HasPrefix(name, "placement_syncd_") && strings.HasSuffix(name, "_info") {
		return len(components) - 1
	}
	return -1
}

// renderMetrics writes the reference, and names each family it cannot
// place.
func renderMetrics(fams map[string]*family) ([]byte, []string) {
	var b bytes.Buffer
	var problems []string
	fmt.Fprintf(&b, "<!-- Generated by `%s`\n", regenerateMetrics)
	b.WriteString("     from the collectors serve registers. Do not edit: change the metric, then regenerate. -->\n\n")
	b.WriteString("# Metrics reference\n\n")
	b.WriteString("Every metric family `placement-syncd serve` can export at `/metrics` with everything enabled: the API,\n")
	b.WriteString("the store on a MySQL or MariaDB database shared by replicas (change feed, reconciler leader), the\n")
	b.WriteString("reconciler, and the agent with its Ironic, FPGA and static drivers. `placement-syncd agent` exports\n")
	b.WriteString("the agent's families and the build and process ones. A labelled family has no series until its\n")
	b.WriteString("first event; it is listed all the same.\n\n")
	b.WriteString("This file is generated from the process's own collectors; after adding or changing a metric,\n")
	fmt.Fprintf(&b, "regenerate it with\n\n    %s\n\n", regenerateMetrics)
	byComponent := make([][]*family, len(components))
	seen := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		if c := collapsedOf(name); c != "" {
			seen[c] = true
			continue
		}
		i := componentOf(name)
		if i < 0 {
			problems = append(problems, fmt.Sprintf("%s belongs to no section of %s: give its prefix one in components", name, metricsRefName))
			continue
		}
		byComponent[i] = append(byComponent[i], fams[name])
	}
	for i, c := range components {
		fmt.Fprintf(&b, "## %s\n\n%s\n\n", c.title, c.about)
		b.WriteString("| Metric | Type | Labels | Help |\n|---|---|---|---|\n")
		for _, f := range byComponent[i] {
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.name, f.typ, labelList(f.labels), tableText(f.help))
		}
		b.WriteString("\n")
	}
	b.WriteString("## Standard collectors\n\n")
	for _, c := range collapsed {
		if seen[c.prefix] {
			fmt.Fprintf(&b, "- `%s*`: %s.\n", c.prefix, c.about)
		}
	}
	return b.Bytes(), problems
}

func collapsedOf(name string) string {
	for _, c := range collapsed {
		if strings.HasPrefix(name, c.prefix) {
			return c.prefix
		}
	}
	return ""
}

func labelList(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return "`" + strings.Join(labels, "`, `") + "`"
}

// tableText keeps a help text in its table cell.
func tableText(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", "*", `\*`, "\n", " ").Replace(s)
}

func TestParseDesc(t *testing.T) {
	d := prometheus.NewDesc("placement_syncd_x_total", `Counts "x", by a|b.`, []string{"route", "code"}, prometheus.Labels{"mode": "auto, or not"})
	f, err := parseDesc(d)
	if err != nil {
		t.Fatal(err)
	}
	if f.name != "placement_syncd_x_total" || f.help != `Counts "x", by a|b.` || !slices.Equal(f.labels, []string{"route", "code", "mode"}) {
		t.Errorf("parseDesc(%s) = %+v", d, f)
	}
}
