// Package httpserve runs an http.Server until its context ends and then
// shuts it down gracefully: the one way every listener of the process
// (the API, /metrics, the agent's and the reconciler's endpoints) stops.
package httpserve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Run serves srv on ln until ctx ends or serving fails, then shuts srv
// down, letting in-flight requests run for up to grace. It returns how
// serving ended (nil after a clean shutdown) and the shutdown's error
// apart, for each caller to word and weigh as its own.
func Run(ctx context.Context, srv *http.Server, ln net.Listener, grace time.Duration) (served, shutdown error) {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err, nil
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	shutdown = srv.Shutdown(sctx)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		served = err
	}
	return served, shutdown
}
