package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// faultOp is one request of a stream.
type faultOp struct {
	replica   int
	start     time.Time
	took      time.Duration
	succeeded bool // a 2xx answer
}

// fate is what the test knows of a consumer it wrote.
type fate int

const (
	fatePresent fate = iota + 1 // its claim was acknowledged, and no delete since
	fateDeleted                 // its delete was acknowledged
	fateUnknown                 // its last request got no answer or a 5xx
)

type consumerFate struct {
	rp   string
	used int64
	fate fate
}

// faultLog records every request of the streams and what became of
// every consumer.
type faultLog struct {
	// client times requests out, so a blocked one is measured, not hung
	// on; its pool keeps a connection per stream client.
	client *http.Client
	seq    atomic.Int64

	mu        sync.Mutex
	ops       []faultOp
	codes     map[int]int
	consumers map[string]*consumerFate
	acked     int // claims acknowledged
	// pool is, per provider, the acknowledged claims not being deleted,
	// oldest first: streams delete from it whichever client made them,
	// so a later stream frees what an earlier one left.
	pool map[string][]string
}

func newFaultLog() *faultLog {
	return &faultLog{
		client: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}},
		codes:  map[int]int{}, consumers: map[string]*consumerFate{}, pool: map[string][]string{},
	}
}

// send sends one request at microversion 1.28 and records its timing.
func (l *faultLog) send(s *daemontest.Daemon, replica int, method, path, body string) int {
	start := time.Now()
	r, _ := l.api(s).Do(context.Background(), method, path, body)
	code := r.Code
	took := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ops = append(l.ops, faultOp{replica: replica, start: start, took: took, succeeded: code >= 200 && code < 300})
	l.codes[code]++
	return code
}

// api is s at microversion 1.28 through the log's client.
func (l *faultLog) api(s *daemontest.Daemon) daemontest.Client {
	return s.API.At("1.28").Via(l.client)
}

// settle records the answer to a claim (want fatePresent) or a delete
// (want fateDeleted) of consumer and returns its fate, 0 when it was
// never created. A 4xx changes nothing.
func (l *faultLog) settle(consumer, rp string, used int64, code int, want fate) fate {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.consumers[consumer]
	if c == nil {
		c = &consumerFate{rp: rp, used: used}
	}
	switch {
	case code >= 200 && code < 300:
		c.fate = want
		if want == fatePresent {
			l.acked++
			l.pool[rp] = append(l.pool[rp], consumer)
		}
	case code == 0 || code >= 500:
		c.fate = fateUnknown
	}
	if c.fate != 0 {
		l.consumers[consumer] = c
	}
	return c.fate
}

func (l *faultLog) statusCounts() map[int]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.codes)
}

// waitAcked lets the streams run until n more claims were acknowledged.
func (l *faultLog) waitAcked(t *testing.T, f *faultSet, n int) {
	t.Helper()
	l.mu.Lock()
	want := l.acked + n
	l.mu.Unlock()
	daemontest.Soon(t, "acknowledged claims", func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.acked < want {
			return fmt.Errorf("%d claims acknowledged, waiting for %d; answers %v; logs:\n%s", l.acked, want, l.codes, f.Tails())
		}
		return nil
	})
}

// streamSpec is a claim stream: clients each claim size VCPU of rp for
// new consumers through replica(client), and delete the oldest claim on
// rp once there are keep per client or after a refusal.
type streamSpec struct {
	rp         string
	size, keep int
	clients    int
	replica    func(client int) int
}

type faultStream struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

func (l *faultLog) stream(f *faultSet, sp streamSpec) *faultStream {
	st := &faultStream{stop: make(chan struct{})}
	for c := range sp.clients {
		st.wg.Add(1)
		go func() {
			defer st.wg.Done()
			l.runClient(f, sp, c, st.stop)
		}()
	}
	return st
}

// end stops the stream and waits for its requests to be answered.
func (st *faultStream) end() {
	select {
	case <-st.stop:
	default:
		close(st.stop)
	}
	st.wg.Wait()
}

func (l *faultLog) runClient(f *faultSet, sp streamSpec, c int, stop chan struct{}) {
	refused := false
	for {
		select {
		case <-stop:
			return
		default:
		}
		i := sp.replica(c)
		s := f.Get(i)
		var code int
		if victim := l.victim(sp, refused); victim != "" {
			code = l.send(s, i, "DELETE", "/allocations/"+victim, "")
			l.settle(victim, sp.rp, int64(sp.size), code, fateDeleted)
			refused = false
		} else {
			consumer := fmt.Sprintf("eeeeeeee-0000-4000-8000-%012d", l.seq.Add(1))
			code = l.send(s, i, "PUT", "/allocations/"+consumer, fmt.Sprintf(
				`{"allocations":{"%s":{"resources":{"VCPU":%d}}},"project_id":"p-%s","user_id":"u","consumer_generation":null}`, sp.rp, sp.size, sp.rp))
			l.settle(consumer, sp.rp, int64(sp.size), code, fatePresent)
			refused = code == 409
		}
		// A dead replica or database, or a full provider with nothing
		// to delete, answers at once: do not spin on it.
		if code == 0 || code >= 500 || refused && l.held(sp.rp) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// victim takes the oldest claim on sp.rp to delete, once the stream's
// clients hold `keep` each or after a refusal; "" to claim instead.
func (l *faultLog) victim(sp streamSpec, refused bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := l.pool[sp.rp]
	if len(q) == 0 || !refused && len(q) < sp.keep*sp.clients {
		return ""
	}
	l.pool[sp.rp] = q[1:]
	return q[0]
}

// held is how many acknowledged claims on rp no client is deleting.
func (l *faultLog) held(rp string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pool[rp])
}

// window is the time a replica was stopped.
type window struct{ from, to time.Time }

// stall is how long writes were held up: the longest latency of a
// request in flight during a window, and the longest time a replica
// completed no write in it.
type stall struct{ latency, gap time.Duration }

func (s stall) worst() time.Duration { return max(s.latency, s.gap) }

func (s stall) max(o stall) stall { return stall{max(s.latency, o.latency), max(s.gap, o.gap)} }

// stall measures the writes of replicas during w. Latency is timed from
// the moment a client sends, so a client's own waiting between requests
// does not count.
func (l *faultLog) stall(replicas []int, w window) stall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s stall
	done := map[int][]time.Time{}
	for _, op := range l.ops {
		if !slices.Contains(replicas, op.replica) {
			continue
		}
		end := op.start.Add(op.took)
		if op.start.Before(w.to) && end.After(w.from) {
			s.latency = max(s.latency, op.took)
		}
		if op.succeeded && !end.Before(w.from) && !end.After(w.to) {
			done[op.replica] = append(done[op.replica], end)
		}
	}
	for _, r := range replicas {
		times := append([]time.Time{w.from}, done[r]...)
		times = append(times, w.to)
		slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
		for k := 1; k < len(times); k++ {
			s.gap = max(s.gap, times[k].Sub(times[k-1]))
		}
	}
	return s
}
