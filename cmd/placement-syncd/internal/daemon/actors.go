package daemon

import (
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/errgroup"
)

// defaultAgentMetricsListen is where `placement-syncd agent` serves
// /metrics when metrics.listen is empty: an agent host has no API
// listener to share (9780, beside the agent's local endpoint on 8780).
const defaultAgentMetricsListen = "127.0.0.1:9780"

// runActors runs every actor in one errgroup: the first to fail stops
// the others, and runActors returns once all have returned.
func runActors(ctx context.Context, actors map[string]actor) error {
	g, gctx := errgroup.WithContext(ctx)
	for name, a := range actors {
		g.Go(func() error {
			if err := a.Run(gctx); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// closeListeners closes what actors that never ran hold open.
func closeListeners(actors map[string]actor) {
	for _, a := range actors {
		if c, ok := a.(interface{ listener() io.Closer }); ok {
			_ = c.listener().Close()
		}
	}
}

func (x agentLocal) listener() io.Closer    { return x.ln }
func (x metricsServer) listener() io.Closer { return x.ln }
func (x httpActor) listener() io.Closer     { return x.ln }
func (x apiServer) listener() io.Closer     { return x.ln }
