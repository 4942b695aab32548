package placementsrv

import (
	"errors"
	"fmt"
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/candidates"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// candidateSettings are the server-wide allocation candidates options.
type candidateSettings struct {
	randomize bool
	max       int
	order     candidates.Order
}

func (c *candidateSettings) configure(opts Options) error {
	c.randomize = opts.RandomizeAllocationCandidates
	if opts.MaxAllocationCandidates < 0 {
		return fmt.Errorf("placementsrv: MaxAllocationCandidates %d is negative", opts.MaxAllocationCandidates)
	}
	c.max = opts.MaxAllocationCandidates
	switch opts.AllocationCandidatesOrder {
	case "", "depth-first":
		c.order = candidates.DepthFirst
	case "round-robin":
		c.order = candidates.RoundRobin
	default:
		return fmt.Errorf("placementsrv: unknown AllocationCandidatesOrder %q (want depth-first or round-robin)", opts.AllocationCandidatesOrder)
	}
	return nil
}

// listAllocationCandidates is GET /allocation_candidates.
func (s *Server) listAllocationCandidates(r *request) (*response, error) {
	if !r.at(microversion.AllocationCandidates) {
		return nil, notFound("")
	}
	if herr := r.checkAccept(); herr != nil {
		return nil, herr
	}
	if err := r.authorize(policyCandidatesList); err != nil {
		return nil, err
	}
	q := queryValues(r)
	if err := s.schemas.AllocationCandidatesQuery(r.minor()).ValidateQuery(q); err != nil {
		return nil, badRequest("Invalid query string parameters: %s", err)
	}
	req, herr := candidatesRequest(r, q)
	if herr != nil {
		return nil, herr
	}
	snap, err := s.store.Snapshot(r.Context())
	if err != nil {
		return nil, err
	}
	res, err := candidates.Find(snap, req, candidates.Options{
		NestedAware:   r.at(microversion.CandidatesNested),
		Randomize:     s.cands.randomize,
		MaxCandidates: s.cands.max,
		Order:         s.cands.order,
	})
	var nf *candidates.NotFoundError
	switch {
	case errors.As(err, &nf) && nf.Class:
		return nil, badRequest("Invalid resource class in resources parameter: %s", nf.Error())
	case errors.As(err, &nf):
		return nil, badRequest("%s", nf.Error())
	case err != nil:
		return nil, err
	}
	body := appendCandidates(make([]byte, 0, 256+len(res.Candidates)*200+len(res.Summaries)*300), snap, &req, &res, r.mv)
	return ok(rawJSON(body)).withLastModified(s.now()), nil
}

// appendCandidates renders the answer in the form of the microversion.
func appendCandidates(b []byte, s *store.Snapshot, req *candidates.Request, res *candidates.Result, mv microversion.Version) []byte {
	b = append(b, `{"allocation_requests":[`...)
	dict := mv.AtLeast(microversion.AllocationsDict)
	mappings := mv.AtLeast(microversion.Mappings)
	for i := range res.Candidates {
		if i > 0 {
			b = append(b, ',')
		}
		c := &res.Candidates[i]
		if dict {
			b = appendAllocationDict(b, s, c)
			if mappings {
				b = appendMappings(b, s, req, c)
			}
		} else {
			b = appendAllocationList(b, s, c)
		}
		b = append(b, '}')
	}
	b = append(b, `],"provider_summaries":{`...)
	b = appendSummaries(b, s, req, res.Summaries, mv)
	return append(b, "}}"...)
}

// appendAllocationDict writes `{"allocations":{uuid:{"resources":{...}}}`
// (Allocs are grouped by provider) without the closing brace.
func appendAllocationDict(b []byte, s *store.Snapshot, c *candidates.Candidate) []byte {
	b = append(b, `{"allocations":{`...)
	for i, a := range c.Allocs {
		if i == 0 || c.Allocs[i-1].Provider != a.Provider {
			if i > 0 {
				b = append(b, "}},"...)
			}
			b = appendJSONString(b, s.Providers[a.Provider].UUID)
			b = append(b, `:{"resources":{`...)
		} else {
			b = append(b, ',')
		}
		b = appendJSONString(b, s.Classes[a.Class])
		b = append(b, ':')
		b = appendInt(b, a.Amount)
	}
	if len(c.Allocs) > 0 {
		b = append(b, "}}"...)
	}
	return append(b, '}')
}

// appendAllocationList writes the pre-1.12 list form without the closing
// brace.
func appendAllocationList(b []byte, s *store.Snapshot, c *candidates.Candidate) []byte {
	b = append(b, `{"allocations":[`...)
	for i, a := range c.Allocs {
		if i == 0 || c.Allocs[i-1].Provider != a.Provider {
			if i > 0 {
				b = append(b, "}},"...)
			}
			b = append(b, `{"resource_provider":{"uuid":`...)
			b = appendJSONString(b, s.Providers[a.Provider].UUID)
			b = append(b, `},"resources":{`...)
		} else {
			b = append(b, ',')
		}
		b = appendJSONString(b, s.Classes[a.Class])
		b = append(b, ':')
		b = appendInt(b, a.Amount)
	}
	if len(c.Allocs) > 0 {
		b = append(b, "}}"...)
	}
	return append(b, ']')
}

func appendMappings(b []byte, s *store.Snapshot, req *candidates.Request, c *candidates.Candidate) []byte {
	b = append(b, `,"mappings":{`...)
	for gi, provs := range c.Mappings {
		if gi > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, req.Groups[gi].Suffix)
		b = append(b, ":["...)
		for k, p := range provs {
			if k > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, s.Providers[p].UUID)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendSummaries writes the provider_summaries members: 1.27+ every
// inventory (before, only requested classes), traits from 1.17, parent
// and root from 1.29.
func appendSummaries(b []byte, s *store.Snapshot, req *candidates.Request, sums []int32, mv microversion.Version) []byte {
	allClasses := mv.AtLeast(microversion.CandidatesAllClasses)
	traits := mv.AtLeast(microversion.CandidatesRequired)
	tree := mv.AtLeast(microversion.CandidatesNested)
	var requested []int32
	if !allClasses {
		for _, g := range req.Groups {
			for _, r := range g.Resources {
				if c, ok := s.ClassByName[r.Class]; ok && !slices.Contains(requested, c) {
					requested = append(requested, c)
				}
			}
		}
	}
	for i, pi := range sums {
		if i > 0 {
			b = append(b, ',')
		}
		p := &s.Providers[pi]
		b = appendJSONString(b, p.UUID)
		b = append(b, `:{"resources":{`...)
		first := true
		for _, inv := range p.Inventories {
			if !allClasses && !slices.Contains(requested, inv.Class) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, s.Classes[inv.Class])
			b = append(b, `:{"capacity":`...)
			b = appendInt(b, inv.Capacity)
			b = append(b, `,"used":`...)
			b = appendInt(b, inv.Used)
			b = append(b, '}')
		}
		b = append(b, '}')
		if traits {
			// Trait ids are interned in database id order, which is the
			// order Placement lists them in.
			b = append(b, `,"traits":[`...)
			for k, t := range p.Traits {
				if k > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, s.Traits[t])
			}
			b = append(b, ']')
		}
		if tree {
			b = append(b, `,"parent_provider_uuid":`...)
			if p.Parent >= 0 {
				b = appendJSONString(b, s.Providers[p.Parent].UUID)
			} else {
				b = append(b, "null"...)
			}
			b = append(b, `,"root_provider_uuid":`...)
			b = appendJSONString(b, s.Providers[p.Root].UUID)
		}
		b = append(b, '}')
	}
	return b
}
