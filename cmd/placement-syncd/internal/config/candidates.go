package config

import (
	"slices"
	"strings"
)

// CandidatesConfig tunes GET /allocation_candidates.
type CandidatesConfig struct {
	// Randomize returns a random sample when a request's limit cuts the
	// answer short (upstream's [placement]randomize_allocation_candidates);
	// otherwise the first candidates in Order are returned.
	Randomize bool `yaml:"randomize"`
	// MaxCandidates caps how many candidates one request may generate,
	// whatever its limit, so a pathological request cannot exhaust memory
	// (upstream's [placement]max_allocation_candidates); 0 or -1 means no
	// cap.
	MaxCandidates int `yaml:"max_candidates"`
	// Order is "depth-first" (one root's candidates after another) or
	// "breadth-first" (one per root in turn), upstream's
	// [placement]allocation_candidates_generation_strategy; "round-robin"
	// is an older name for breadth-first.
	Order string `yaml:"order"`
	// OptimizeForWideProviderTrees is upstream's
	// [workarounds]optimize_for_wide_provider_trees. In Placement 15.0.0 it
	// also changes answers: amounts several groups take from one provider
	// are checked against its capacity without its usage, and
	// breadth-first counts only such products (see candidates/DESIGN.md).
	OptimizeForWideProviderTrees bool `yaml:"optimize_for_wide_provider_trees"`
}

var candidateOrders = []string{"depth-first", "breadth-first", "round-robin"}

func defaultCandidatesConfig() CandidatesConfig {
	return CandidatesConfig{Order: "depth-first"}
}

func checkCandidates(cfg *Config, p *problems) {
	const prefix = "api.allocation_candidates"
	c := cfg.API.AllocationCandidates
	if c.MaxCandidates < -1 {
		p.bad(prefix+".max_candidates", "must be -1 or 0 (no cap) or positive, got %d", c.MaxCandidates)
	}
	if !slices.Contains(candidateOrders, c.Order) {
		p.bad(prefix+".order", "invalid order %q (one of %s)", c.Order, strings.Join(candidateOrders, ", "))
	}
}

// Cap is the cap placementsrv takes: 0 for none.
func (c CandidatesConfig) Cap() int {
	return max(c.MaxCandidates, 0)
}
