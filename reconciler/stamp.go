package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/placement-syncd/placement-syncd/internal/backoff"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// Owner traits (os-traits 2.8.0).
const (
	TraitOwnerNova   = "OWNER_NOVA"
	TraitOwnerCyborg = "OWNER_CYBORG"
	TraitComputeNode = "COMPUTE_NODE"
)

// OwnerStamp puts OWNER_NOVA on Nova-owned providers that lack it, when
// the version gate is open.
type OwnerStamp struct {
	Placement Placement
	// Nova, when set, adds its compute node uuids to the providers
	// considered Nova's (besides roots with COMPUTE_NODE).
	Nova        NovaSource
	Gate        func() GateState
	Logger      *zap.Logger
	Concurrency int
	Retry       backoff.Policy
}

// StampResult is one run of OwnerStamp.
type StampResult struct {
	Gate GateState
	// Candidates are the Nova-owned providers found without OWNER_NOVA.
	Candidates []string
	Stamped    []string
	Conflicts  int
	GiveUps    int
	Failed     map[string]error
}

// Run stamps OWNER_NOVA when the gate is open and does nothing when it is
// closed. A provider carrying OWNER_CYBORG is never stamped.
func (s *OwnerStamp) Run(ctx context.Context, dryRun bool) (*StampResult, error) {
	res := &StampResult{Gate: s.Gate(), Failed: map[string]error{}}
	if !res.Gate.Open {
		return res, nil
	}
	cands, err := s.candidates(ctx)
	if err != nil {
		return res, err
	}
	res.Candidates = cands
	if dryRun || len(cands) == 0 {
		return res, nil
	}
	retry := s.Retry
	if retry.Attempts <= 0 {
		retry = DefaultRetry()
	}
	stamped := make([]bool, len(cands))
	errs := make([]error, len(cands))
	var conflicts, giveUps atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(s.Concurrency, 1))
	for i, p := range cands {
		g.Go(func() error {
			n, ok, err := stampOne(gctx, s.Placement, p, retry)
			conflicts.Add(int64(n))
			if errors.Is(err, placementclient.ErrConcurrentUpdate) {
				giveUps.Add(1)
			}
			stamped[i], errs[i] = ok, err
			return nil
		})
	}
	_ = g.Wait()
	res.Conflicts, res.GiveUps = int(conflicts.Load()), int(giveUps.Load())
	for i, p := range cands {
		switch {
		case errs[i] != nil:
			res.Failed[p] = errs[i]
		case stamped[i]:
			res.Stamped = append(res.Stamped, p)
		}
	}
	if len(res.Failed) > 0 {
		return res, fmt.Errorf("%w: stamping %s failed on %d of %d providers", ErrPlacement, TraitOwnerNova, len(res.Failed), len(cands))
	}
	return res, nil
}

// candidates lists Nova-owned providers lacking OWNER_NOVA: roots with
// COMPUTE_NODE, and Nova's compute node uuids. The forbidden traits in
// the query keep OWNER_CYBORG providers out from the start.
func (s *OwnerStamp) candidates(ctx context.Context) ([]string, error) {
	out := map[string]bool{}
	roots, err := s.Placement.Providers(ctx, ProviderQuery{Required: TraitComputeNode + ",!" + TraitOwnerNova + ",!" + TraitOwnerCyborg})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPlacement, err)
	}
	for _, p := range roots {
		if p.ParentUUID == "" {
			out[p.UUID] = true
		}
	}
	if s.Nova != nil {
		nova, err := s.Nova.State(ctx)
		if err != nil {
			return nil, err
		}
		if len(nova.Nodes) > 0 {
			lacking, err := s.Placement.Providers(ctx, ProviderQuery{Required: "!" + TraitOwnerNova + ",!" + TraitOwnerCyborg})
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrPlacement, err)
			}
			nodes := map[string]bool{}
			for _, n := range nova.Nodes {
				nodes[n.UUID] = true
			}
			for _, p := range lacking {
				if nodes[p.UUID] {
					out[p.UUID] = true
				}
			}
		}
	}
	return sortedKeys(out), nil
}

// stampOne adds OWNER_NOVA to one provider's traits in one
// generation-checked PUT, re-reading on conflict. It re-checks the fresh
// traits each time: an OWNER_CYBORG that appeared meanwhile stops it.
// It returns the conflicts met and whether it wrote.
func stampOne(ctx context.Context, pl Placement, provider string, retry backoff.Policy) (int, bool, error) {
	conflicts := 0
	for attempt := 1; ; attempt++ {
		cur, err := pl.Traits(ctx, provider)
		if errors.Is(err, ErrProviderNotFound) {
			return conflicts, false, nil // deleted meanwhile: nothing to own
		}
		if err != nil {
			return conflicts, false, fmt.Errorf("%w: %w", ErrPlacement, err)
		}
		if slices.Contains(cur.Items, TraitOwnerNova) || slices.Contains(cur.Items, TraitOwnerCyborg) {
			return conflicts, false, nil
		}
		next := append(slices.Clone(cur.Items), TraitOwnerNova)
		slices.Sort(next)
		_, err = pl.SetTraits(ctx, provider, next, cur.Generation)
		if err == nil {
			return conflicts, true, nil
		}
		switch {
		case errors.Is(err, placementclient.ErrConcurrentUpdate):
			conflicts++
		case errors.Is(err, ErrUnavailable):
		default:
			return conflicts, false, fmt.Errorf("%w: %w", ErrPlacement, err)
		}
		if attempt >= retry.Attempts {
			return conflicts, false, fmt.Errorf("provider %s: gave up after %d attempts: %w", provider, attempt, err)
		}
		if werr := retry.Wait(ctx, attempt); werr != nil {
			return conflicts, false, werr
		}
	}
}
