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

// otherOwnerTraits are the owner traits of services other than Nova:
// every OWNER_* trait of os-traits 2.9.0 but OWNER_NOVA. A provider
// carrying one belongs to that service, whatever its root says.
func otherOwnerTraits() []string {
	return []string{traitOwnerCyborg}
}

// isOwnerTrait reports whether t is an owner trait of any service.
func isOwnerTrait(t string) bool {
	return t == traitOwnerNova || slices.Contains(otherOwnerTraits(), t)
}

// Prefilter is the scheduler-side filter of the OWNER_NOVA spec done in
// Placement. Allocation candidate requests from the scheduler get
// root_required=OWNER_NOVA, as Nova's owner_nova_filter adds, and every
// request group that does not itself ask for another service's owner
// trait (a Cyborg device-profile group does) gets that service's owner
// traits forbidden, so resources another owner reports, child providers
// under a Nova root included, are not handed out as Nova's. It is safe
// for concurrent use.
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

// Apply rewrites a scheduler identity's request while the filter is
// active: OWNER_NOVA joins the root's required traits unless the request
// already says which owner its root must (not) have, and each group that
// does not ask for another owner's trait forbids those traits.
func (p *Prefilter) Apply(user string, req *Request) {
	if p.mode == PrefilterOff || !slices.Contains(p.users, user) {
		return
	}
	if p.mode == PrefilterAuto && !p.gate.OwnerNovaGateOpen() {
		return
	}
	if !slices.ContainsFunc(req.RootRequired, isOwnerTrait) && !slices.ContainsFunc(req.RootForbidden, isOwnerTrait) {
		req.RootRequired = append(req.RootRequired, traitOwnerNova)
	}
	for i := range req.Groups {
		g := &req.Groups[i]
		if asksOtherOwner(g) {
			continue // another service's group, e.g. a Cyborg device profile
		}
		for _, t := range otherOwnerTraits() {
			if !slices.Contains(g.Forbidden, t) {
				g.Forbidden = append(g.Forbidden, t)
			}
		}
	}
}

// asksOtherOwner reports whether a group requires (alone or in an any-of)
// the owner trait of a service other than Nova.
func asksOtherOwner(g *Group) bool {
	for _, anyOf := range g.Required {
		for _, t := range anyOf {
			if slices.Contains(otherOwnerTraits(), t) {
				return true
			}
		}
	}
	return false
}

// PrefilterAdded says which parts of a request the OWNER_NOVA pre-filter
// added: the last root of root_required traits, and each group's last
// forbidden[i] forbidden traits. The zero value says nothing was.
type PrefilterAdded struct {
	root      int
	forbidden []int
	user      string
}

// ApplyFor applies the pre-filter to req as it would to a request from
// user, "" standing for the first scheduler identity it is configured
// for, and says what it added. A nil or inactive filter adds nothing.
func (p *Prefilter) ApplyFor(user string, req *Request) PrefilterAdded {
	if p == nil {
		return PrefilterAdded{}
	}
	root := len(req.RootRequired)
	forb := make([]int, len(req.Groups))
	for i, g := range req.Groups {
		forb[i] = len(g.Forbidden)
	}
	if user == "" && len(p.users) > 0 {
		user = p.users[0]
	}
	p.Apply(user, req)
	added := PrefilterAdded{root: len(req.RootRequired) - root, forbidden: forb, user: user}
	for i, g := range req.Groups {
		added.forbidden[i] = len(g.Forbidden) - forb[i]
	}
	return added
}

// Applied reports whether the pre-filter added anything.
func (a PrefilterAdded) Applied() bool {
	return a.root > 0 || slices.ContainsFunc(a.forbidden, func(n int) bool { return n > 0 })
}

// User is the identity the pre-filter was applied as.
func (a PrefilterAdded) User() string { return a.user }

// RootAdded reports whether root_required trait i of req was added.
func (a PrefilterAdded) RootAdded(req *Request, i int) bool {
	return i >= len(req.RootRequired)-a.root
}

// ForbiddenAdded reports whether forbidden trait i of group gi was added.
func (a PrefilterAdded) ForbiddenAdded(req *Request, gi, i int) bool {
	return gi < len(a.forbidden) && i >= len(req.Groups[gi].Forbidden)-a.forbidden[gi]
}
