// Package flavorreq translates a Nova flavor into the allocation
// candidates request Nova 26.2's scheduler sends Placement for it: the
// resource request built from the flavor and its extra specs, then the
// scheduler's own pre-filters. It is a plain description, rendered as
// Nova's query string by Query; it knows neither Placement's engine nor
// where the flavor came from.
//
// The behaviour follows Nova 26.2's nova/scheduler/utils.py
// (ResourceRequest.from_request_spec, _process_extra_specs,
// _add_resource, _add_trait, _add_group_policy,
// _translate_pinning_policies, strip_zeros, to_querystring) and
// nova/scheduler/request_filter.py (compute_status_filter,
// ephemeral_encryption_filter), and nova/virt/hardware.py's
// numa_get_constraints for the CPU specs Nova refuses, for a server booted from an image (root disk
// counted), without image properties, ports or device profiles.
package flavorreq

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// Resource is one requested amount of a class.
type Resource struct {
	Class  string
	Amount int64
}

// Group is one request group; Suffix "" is the unsuffixed group.
type Group struct {
	Suffix    string
	Resources []Resource // sorted by class
	Required  []string   // sorted
	Forbidden []string   // sorted
}

// Request is what the scheduler asks GET /allocation_candidates for.
type Request struct {
	Groups        []Group // the unsuffixed group first, then by suffix
	GroupPolicy   string  // "", "none" or "isolate"
	RootRequired  []string
	RootForbidden []string
}

// Options are the deployment's choices that change the request.
type Options struct {
	// OwnerNova adds what placement-syncd's OWNER_NOVA pre-filter adds
	// to a scheduler's request (placementsrv/candidates Prefilter), for
	// when the request is sent by someone it does not apply to.
	OwnerNova bool
}

// Result is one flavor's translation: Request when Err is nil; Notes
// name extra specs Nova ignores (with a warning in its log) or checks
// outside Placement.
type Result struct {
	Flavor  novaclient.Flavor
	Request Request
	Notes   []string
	Err     error
}

// TranslateAll translates every flavor, in order; none is dropped.
func TranslateAll(flavors []novaclient.Flavor, o Options) []Result {
	out := make([]Result, 0, len(flavors))
	for _, f := range flavors {
		req, notes, err := Translate(f, o)
		out = append(out, Result{Flavor: f, Request: req, Notes: notes, Err: err})
	}
	return out
}

// Translate builds f's request; an error says why it cannot be (the
// flavor is refused by Nova at boot, Placement would refuse the request,
// or the request depends on something not modelled here).
func Translate(f novaclient.Flavor, o Options) (Request, []string, error) {
	b := newBuilder()
	if err := amounts(f); err != nil {
		return Request{}, nil, err
	}
	if err := unmodelled(f.ExtraSpecs); err != nil {
		return Request{}, nil, err
	}
	b.extraSpecs(f.ExtraSpecs)
	if err := b.pinning(f); err != nil {
		return Request{}, nil, err
	}
	b.flavorAmounts(f)
	b.stripZeros()
	b.preFilters(f.ExtraSpecs, o)
	req := b.request()
	if err := sendable(req); err != nil {
		return Request{}, nil, err
	}
	return req, append(b.notes, hostFilterNotes(f)...), nil
}

// group is a request group while building.
type group struct {
	resources           map[string]int64
	required, forbidden map[string]bool
}

func (g *group) empty() bool {
	return len(g.resources) == 0 && len(g.required) == 0 && len(g.forbidden) == 0
}

type builder struct {
	groups        map[string]*group
	policy        string
	rootRequired  map[string]bool
	rootForbidden map[string]bool
	notes         []string
}

func newBuilder() *builder {
	return &builder{groups: map[string]*group{}, rootRequired: map[string]bool{}, rootForbidden: map[string]bool{}}
}

func (b *builder) group(suffix string) *group {
	g, ok := b.groups[suffix]
	if !ok {
		g = &group{resources: map[string]int64{}, required: map[string]bool{}, forbidden: map[string]bool{}}
		b.groups[suffix] = g
	}
	return g
}

// merged reports whether any group, suffixed or not, names class: the
// flavor's own amounts only fill classes the extra specs leave alone.
func (b *builder) merged(class string) bool {
	for _, g := range b.groups {
		if _, ok := g.resources[class]; ok {
			return true
		}
	}
	return false
}

// flavorAmounts adds VCPU, MEMORY_MB and DISK_GB to the unsuffixed
// group unless the extra specs (or the pinning translation) named them:
// disk is root + ephemeral + swap, swap in MB rounded up to GB.
func (b *builder) flavorAmounts(f novaclient.Flavor) {
	g := b.group("")
	if !b.merged("VCPU") && !b.merged("PCPU") {
		g.resources["VCPU"] = f.VCPUs
	}
	if !b.merged("MEMORY_MB") {
		g.resources["MEMORY_MB"] = f.RAM
	}
	if !b.merged("DISK_GB") {
		if disk := f.Disk + f.Ephemeral + ceilGB(f.Swap); disk != 0 {
			g.resources["DISK_GB"] = disk
		}
	}
}

// amounts refuses a negative size, which Nova's API never stores (a
// file may hold one).
func amounts(f novaclient.Flavor) error {
	for key, n := range map[string]int64{"vcpus": f.VCPUs, "ram": f.RAM, "disk": f.Disk, "ephemeral": f.Ephemeral, "swap": f.Swap} {
		if n < 0 {
			return &Untranslatable{Key: key, Kind: NovaRefuses, Reason: fmt.Sprintf("negative (%d)", n)}
		}
	}
	return nil
}

// ceilGB converts MB to GB rounding up, as Nova's convert_mb_to_ceil_gb.
func ceilGB(mb int64) int64 {
	if mb <= 0 {
		return 0
	}
	return (mb + 1023) / 1024
}

// stripZeros drops zero amounts (how resources:CLASS=0 removes a class),
// then groups left with nothing.
func (b *builder) stripZeros() {
	for suffix, g := range b.groups {
		for c, n := range g.resources {
			if n == 0 {
				delete(g.resources, c)
			}
		}
		if g.empty() {
			delete(b.groups, suffix)
		}
	}
}

// request freezes the builder into sorted, comparable form.
func (b *builder) request() Request {
	req := Request{GroupPolicy: b.policy, RootRequired: sortedKeys(b.rootRequired), RootForbidden: sortedKeys(b.rootForbidden)}
	for suffix, g := range b.groups {
		rg := Group{Suffix: suffix, Required: sortedKeys(g.required), Forbidden: sortedKeys(g.forbidden)}
		for c, n := range g.resources {
			rg.Resources = append(rg.Resources, Resource{Class: c, Amount: n})
		}
		slices.SortFunc(rg.Resources, func(a, b Resource) int { return cmp.Compare(a.Class, b.Class) })
		req.Groups = append(req.Groups, rg)
	}
	slices.SortFunc(req.Groups, func(a, b Group) int { return cmp.Compare(a.Suffix, b.Suffix) })
	return req
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Why a flavor is untranslatable.
const (
	NovaRefuses      = "Nova refuses to boot it"
	PlacementRefuses = "Placement refuses the request"
	NotModelled      = "not modelled"
)

// Untranslatable is the error of a flavor that cannot be translated:
// Kind is NovaRefuses, PlacementRefuses or NotModelled, Key the extra
// spec (or size) at fault.
type Untranslatable struct {
	Key, Kind, Reason string
}

func (e *Untranslatable) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Key, e.Kind, e.Reason)
}
