package candidates

import (
	"fmt"
	"slices"
)

// OWNER_NOVA pre-filter modes.
const (
	PrefilterOff  = "off"  // never add the filter (the default)
	PrefilterOn   = "on"   // always add it
	PrefilterAuto = "auto" // add it while the OwnerNovaGate is open
)

const (
	traitOwnerNova   = "OWNER_NOVA"
	traitOwnerCyborg = "OWNER_CYBORG"
)

// OwnerNovaGate tells the pre-filter whether every compute reports
// OWNER_NOVA. The reconciler implements it; the server only asks.
type OwnerNovaGate interface {
	OwnerNovaGateOpen() bool
}

// Prefilter is the scheduler-side filter of the OWNER_NOVA spec done in
// Placement: allocation candidate requests from the scheduler get
// root_required=OWNER_NOVA, so resources another owner (Cyborg) reports
// are not handed out as Nova's. It is safe for concurrent use.
type Prefilter struct {
	mode  string
	gate  OwnerNovaGate
	users []string
}

// NewPrefilter checks mode ("" is PrefilterOff) and builds the filter
// for requests from users; PrefilterAuto needs gate.
func NewPrefilter(mode string, gate OwnerNovaGate, users []string) (*Prefilter, error) {
	p := &Prefilter{mode: mode, gate: gate, users: users}
	switch p.mode {
	case "":
		p.mode = PrefilterOff
	case PrefilterOff, PrefilterOn:
	case PrefilterAuto:
		if p.gate == nil {
			return nil, fmt.Errorf("OwnerNovaPrefilter %q needs an OwnerNovaGate", p.mode)
		}
	default:
		return nil, fmt.Errorf("unknown OwnerNovaPrefilter %q (want off, on or auto)", p.mode)
	}
	return p, nil
}

// Apply adds OWNER_NOVA to the root's required traits when the filter is
// active, the caller is a scheduler identity, and the request does not
// already say which owner it wants.
func (p *Prefilter) Apply(user string, req *Request) {
	if p.mode == PrefilterOff || !slices.Contains(p.users, user) {
		return
	}
	if p.mode == PrefilterAuto && !p.gate.OwnerNovaGateOpen() {
		return
	}
	if namesOwner(req) {
		return
	}
	req.RootRequired = append(req.RootRequired, traitOwnerNova)
}

// namesOwner reports whether any required or forbidden trait of the
// request, at the root or in a group, is an owner trait.
func namesOwner(req *Request) bool {
	isOwner := func(t string) bool { return t == traitOwnerNova || t == traitOwnerCyborg }
	if slices.ContainsFunc(req.RootRequired, isOwner) || slices.ContainsFunc(req.RootForbidden, isOwner) {
		return true
	}
	for _, g := range req.Groups {
		if slices.ContainsFunc(g.Forbidden, isOwner) {
			return true
		}
		for _, anyOf := range g.Required {
			if slices.ContainsFunc(anyOf, isOwner) {
				return true
			}
		}
	}
	return false
}
