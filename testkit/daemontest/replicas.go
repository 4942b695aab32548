package daemontest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// Replicas are daemons started as the binary from the options of each,
// which a test kills, pauses and restarts while other goroutines send
// them requests.
type Replicas struct {
	mu sync.Mutex // guards ds: a restart replaces a daemon
	ds []*Daemon
}

// StartReplicas starts n binaries, replica i with opts(i).
func (m *Main) StartReplicas(t testing.TB, n int, opts func(i int) Options) *Replicas {
	t.Helper()
	r := &Replicas{}
	for i := range n {
		o := opts(i)
		o.InProcess = false
		r.ds = append(r.ds, m.Start(t, o))
	}
	return r
}

// Len is how many replicas there are.
func (r *Replicas) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ds)
}

// Get is replica i as it runs now.
func (r *Replicas) Get(i int) *Daemon {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ds[i]
}

// Kill sends replica i SIGKILL and waits until it is gone.
func (r *Replicas) Kill(t testing.TB, i int) {
	t.Helper()
	r.Get(i).Kill(t)
}

// Restart starts replica i again with its options.
func (r *Replicas) Restart(t testing.TB, i int) *Daemon {
	t.Helper()
	d := r.Get(i).Restart(t)
	r.mu.Lock()
	r.ds[i] = d
	r.mu.Unlock()
	return d
}

// Pause stops replica i with SIGSTOP for dur (see Daemon.Pause).
func (r *Replicas) Pause(t testing.TB, i int, dur time.Duration) (from, to time.Time) {
	t.Helper()
	return r.Get(i).Pause(t, dur)
}

// Tails are the ends of the replicas' logs, for a failure's message.
func (r *Replicas) Tails() string {
	var b strings.Builder
	for i := range r.Len() {
		fmt.Fprintf(&b, "replica %d:\n%s\n", i, r.Get(i).Log.Tail(2000))
	}
	return b.String()
}
