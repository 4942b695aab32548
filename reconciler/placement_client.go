package reconciler

import (
	"context"
	"errors"
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementclient"
)

// clientPlacement adapts placementclient.Client to Placement.
type clientPlacement struct {
	c *placementclient.Client
}

// FromClient returns the Placement the reconciler uses, backed by c.
func FromClient(c *placementclient.Client) Placement {
	return clientPlacement{c: c}
}

func (p clientPlacement) Providers(ctx context.Context, q ProviderQuery) ([]Provider, error) {
	rps, err := p.c.ListProviders(ctx, placementclient.ListFilter{MemberOf: q.MemberOf, Required: q.Required})
	if err != nil {
		return nil, mapClientErr(err)
	}
	out := make([]Provider, len(rps))
	for i, rp := range rps {
		out[i] = Provider{UUID: rp.UUID, Name: rp.Name, ParentUUID: rp.ParentUUID, RootUUID: rp.RootUUID, Generation: int64(rp.Generation)}
	}
	return out, nil
}

func (p clientPlacement) Aggregates(ctx context.Context, provider string) (Membership, error) {
	a, err := p.c.GetAggregates(ctx, provider)
	if err != nil {
		return Membership{}, mapClientErr(err)
	}
	if a.Generation < 0 {
		return Membership{}, fmt.Errorf("get aggregates of %s: the server is older than Placement 1.19 (no aggregate generations)", provider)
	}
	return Membership{Items: a.Aggregates, Generation: int64(a.Generation)}, nil
}

func (p clientPlacement) SetAggregates(ctx context.Context, provider string, aggregates []string, generation int64) (int64, error) {
	g, err := p.c.PutAggregates(ctx, provider, int(generation), aggregates)
	return int64(g), mapClientErr(err)
}

func (p clientPlacement) Traits(ctx context.Context, provider string) (Membership, error) {
	t, err := p.c.GetTraits(ctx, provider)
	if err != nil {
		return Membership{}, mapClientErr(err)
	}
	return Membership{Items: t.Traits, Generation: int64(t.Generation)}, nil
}

func (p clientPlacement) SetTraits(ctx context.Context, provider string, traits []string, generation int64) (int64, error) {
	g, err := p.c.PutTraits(ctx, provider, int(generation), traits)
	return int64(g), mapClientErr(err)
}

// mapClientErr adds the reconciler's sentinels to the client's errors.
func mapClientErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, placementclient.ErrNotFound):
		return fmt.Errorf("%w: %w", ErrProviderNotFound, err)
	case errors.Is(err, placementclient.ErrConcurrentUpdate):
		return err // the client's sentinel is the reconciler's too
	case placementclient.Retryable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}
