package main

import (
	"fmt"
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
	// whatever its limit, so a pathological request cannot exhaust memory;
	// 0 means no cap.
	MaxCandidates int `yaml:"max_candidates"`
	// Order is "depth-first" (one root's candidates after another, as
	// Placement 8.0.0) or "round-robin" (one per root in turn, as later
	// Placement releases).
	Order string `yaml:"order"`
}

var candidateOrders = []string{"depth-first", "round-robin"}

func defaultCandidatesConfig() CandidatesConfig {
	return CandidatesConfig{Order: "depth-first"}
}

func (c CandidatesConfig) validate(prefix string) []error {
	var errs []error
	if c.MaxCandidates < 0 {
		errs = append(errs, &fieldError{Key: prefix + ".max_candidates", Msg: fmt.Sprintf("must not be negative, got %d", c.MaxCandidates)})
	}
	if !slices.Contains(candidateOrders, c.Order) {
		errs = append(errs, &fieldError{Key: prefix + ".order", Msg: fmt.Sprintf("invalid order %q (one of %s)", c.Order, strings.Join(candidateOrders, ", "))})
	}
	return errs
}
