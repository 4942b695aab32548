package difftest

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// Group is the mismatches of one class on one route: the first one is
// the shortest prefix of the sequence that shows it.
type Group struct {
	Key   string // "METHOD /route | kind where what"
	First Mismatch
	Ops   []int
}

// GroupMismatches groups requests by route and by the classes of their
// differences (one request's differences stay together: a wrong status
// brings a different body), in the order each group first appeared.
func GroupMismatches(ms []Mismatch) []*Group {
	byKey := map[string]*Group{}
	var out []*Group
	for _, m := range ms {
		key := m.Method + " " + RouteTemplate(m.Path) + " | " + classes(m.Diffs)
		g, ok := byKey[key]
		if !ok {
			g = &Group{Key: key, First: m}
			byKey[key] = g
			out = append(out, g)
		}
		g.Ops = append(g.Ops, m.Op)
	}
	return out
}

// classes names a request's differences: the status pair when the
// statuses differ, else the sorted classes of the differences.
func classes(ds []Diff) string {
	var cs []string
	for _, d := range ds {
		if d.Kind == "status" {
			return "status " + d.Ref + " vs " + d.Ours
		}
		cs = append(cs, d.Class())
	}
	slices.Sort(cs)
	return strings.Join(slices.Compact(cs), "; ")
}

// WriteReport prints the figures and each group with the op to replay up
// to, the request and both answers of its first occurrence.
func WriteReport(w io.Writer, label string, s Stats, ms []Mismatch) {
	fmt.Fprintf(w, "difftest %s: %s\n", label, s.Summary())
	groups := GroupMismatches(ms)
	for i, g := range groups {
		m := g.First
		fmt.Fprintf(w, "\n[%d] %s — %d requests; first at op %d (replay up to op %d)\n", i+1, g.Key, len(g.Ops), m.Op, m.Op)
		fmt.Fprintf(w, "    ops: %s\n", opList(g.Ops))
		if m.Diverged > 0 {
			fmt.Fprintf(w, "    (after op %d, a write one server carried out and the other refused: the states may differ from there)\n", m.Diverged)
		}
		fmt.Fprintf(w, "    %s %s mv=%v gen=%s", m.Method, m.Path, mvText(m.MV), m.Gen)
		if m.Note != "" {
			fmt.Fprintf(w, " note=%q", m.Note)
		}
		fmt.Fprintln(w)
		if m.Body != "" {
			fmt.Fprintf(w, "    body: %s\n", clip(m.Body, 400))
		}
		fmt.Fprintf(w, "    ref  %d: %s\n", m.Ref.Status, clip(string(m.Ref.Body), 600))
		fmt.Fprintf(w, "    ours %d: %s\n", m.Ours.Status, clip(string(m.Ours.Body), 600))
		for _, d := range m.Diffs {
			fmt.Fprintf(w, "    - %s\n", d)
		}
	}
}

// WriteRefCrashes lists the requests only the reference answered with a
// 5xx, with the op to replay up to.
func WriteRefCrashes(w io.Writer, ms []Mismatch) {
	for _, m := range ms {
		fmt.Fprintf(w, "\nreference %d at op %d (not a mismatch): %s %s mv=%v gen=%s\n", m.Ref.Status, m.Op, m.Method, m.Path, mvText(m.MV), m.Gen)
		if m.Body != "" {
			fmt.Fprintf(w, "    body: %s\n", clip(m.Body, 400))
		}
		fmt.Fprintf(w, "    ref  %d: %s\n", m.Ref.Status, clip(string(m.Ref.Body), 300))
		fmt.Fprintf(w, "    ours %d: %s\n", m.Ours.Status, clip(string(m.Ours.Body), 300))
	}
}

// Summary is the run's figures on one line.
func (s Stats) Summary() string {
	line := fmt.Sprintf("%d requests, %d mismatched; %d deliberately wrong, answered 5xx by ref %d, ours %d; all 5xx: ref %d, ours %d",
		s.Requests, s.Mismatched, s.Bad, s.BadRef5xx, s.BadOurs5xx, s.Ref5xx, s.Ours5xx)
	names := slices.Sorted(maps.Keys(s.Deliberate))
	for i, name := range names {
		sep := ", "
		if i == 0 {
			sep = "; documented differences (DESIGN.md): "
		}
		line += fmt.Sprintf("%s%s %d", sep, name, s.Deliberate[name])
	}
	return line
}

func mvText(mv any) string {
	switch v := mv.(type) {
	case nil:
		return "none"
	case int:
		return fmt.Sprintf("1.%d", v)
	case float64:
		return fmt.Sprintf("1.%d", int(v))
	}
	return fmt.Sprintf("%q", mv)
}

func opList(ops []int) string {
	var parts []string
	for i, op := range ops {
		if i == 12 {
			parts = append(parts, fmt.Sprintf("... (%d more)", len(ops)-i))
			break
		}
		parts = append(parts, fmt.Sprint(op))
	}
	return strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// Uncovered lists the routes of the API (method and template) that a
// run's statistics do not show.
func Uncovered(s Stats) []string {
	var out []string
	for _, r := range APIRoutes {
		if s.Routes[r] == 0 {
			out = append(out, r)
		}
	}
	return out
}

// MissingMinors lists the microversions 1.0 to microversion.Max a run did
// not send.
func MissingMinors(s Stats) []int {
	var out []int
	for v := 0; v <= microversion.Max.Minor; v++ {
		if s.Minors[v] == 0 {
			out = append(out, v)
		}
	}
	return out
}

// APIRoutes is every route and method of Placement 8.0.0.
var APIRoutes = []string{
	"GET /",
	"GET /resource_classes", "POST /resource_classes",
	"GET /resource_classes/{name}", "PUT /resource_classes/{name}", "DELETE /resource_classes/{name}",
	"GET /resource_providers", "POST /resource_providers",
	"GET /resource_providers/{uuid}", "PUT /resource_providers/{uuid}", "DELETE /resource_providers/{uuid}",
	"GET /resource_providers/{uuid}/inventories", "POST /resource_providers/{uuid}/inventories",
	"PUT /resource_providers/{uuid}/inventories", "DELETE /resource_providers/{uuid}/inventories",
	"GET /resource_providers/{uuid}/inventories/{name}", "PUT /resource_providers/{uuid}/inventories/{name}",
	"DELETE /resource_providers/{uuid}/inventories/{name}",
	"GET /resource_providers/{uuid}/usages",
	"GET /resource_providers/{uuid}/aggregates", "PUT /resource_providers/{uuid}/aggregates",
	"GET /resource_providers/{uuid}/allocations",
	"POST /allocations",
	"GET /allocations/{uuid}", "PUT /allocations/{uuid}", "DELETE /allocations/{uuid}",
	"GET /allocation_candidates",
	"GET /traits", "GET /traits/{name}", "PUT /traits/{name}", "DELETE /traits/{name}",
	"GET /resource_providers/{uuid}/traits", "PUT /resource_providers/{uuid}/traits",
	"DELETE /resource_providers/{uuid}/traits",
	"GET /usages",
	"POST /reshaper",
}
