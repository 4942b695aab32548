package httpserve

import (
	"net"
	"net/http"
	"sync"
)

// newConns tracks the connections that have not delivered a request yet,
// so that a shutdown can close them at once. net/http's Shutdown counts
// such a connection as busy for its first 5 s, and a client's pool often
// holds one it dialed and never used; with a shorter grace the shutdown
// would fail for a connection that carries no request.
type newConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// watchNewConns wraps srv's ConnState hook (keeping any it had) and has Shutdown
// close the connections still new once the listeners are closed.
func watchNewConns(srv *http.Server) {
	n := &newConns{conns: map[net.Conn]struct{}{}}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		n.mu.Lock()
		if s == http.StateNew {
			n.conns[c] = struct{}{}
		} else {
			delete(n.conns, c)
		}
		n.mu.Unlock()
		if prev != nil {
			prev(c, s)
		}
	}
	srv.RegisterOnShutdown(n.closeAll)
}

func (n *newConns) closeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.conns {
		_ = c.Close() // the connection carries no request; its error says nothing
	}
}
