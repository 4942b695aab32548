package placementclient

import (
	"context"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/placement-syncd/placement-syncd/microversion"
)

// anyVersion as a call's need: every microversion the server offers will
// do.
var anyVersion = microversion.Version{}

// extractor is a gophercloud result that decodes to *T.
type extractor[T any] interface{ Extract() (*T, error) }

// errExtractor is a gophercloud result with no body to decode.
type errExtractor interface{ ExtractErr() error }

// request is a gophercloud call on the thing named id (a provider uuid, a
// trait or class name).
type request[R any] func(ctx context.Context, sc *gophercloud.ServiceClient, id string) R

// get reads what do returns for id, at the highest microversion the
// server offers up to want (below need it fails with ErrUnsupported), and
// converts it to the client's own type. Errors name op.
func get[T, O any, R extractor[T]](ctx context.Context, c *Client, op string, need, want microversion.Version, id string,
	do request[R], convert func(*T) O,
) (O, error) {
	var none O
	sc, _, err := c.atLeast(ctx, op, need, want)
	if err != nil {
		return none, err
	}
	r, err := do(ctx, sc, id).Extract()
	if err != nil {
		return none, wrapErr(op, err)
	}
	return convert(r), nil
}

// send is get for a request that answers no body.
func send[R errExtractor](ctx context.Context, c *Client, op string, need, want microversion.Version, id string, do request[R]) error {
	sc, _, err := c.atLeast(ctx, op, need, want)
	if err != nil {
		return err
	}
	return wrapErr(op, do(ctx, sc, id).ExtractErr())
}
