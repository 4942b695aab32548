package novafull

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"
)

// writerLog records every request two writers (Nova and the agent) send
// to one Placement, each through a proxy of its own, with what each
// write set: the request log the bare-metal counts are made from.
type writerLog struct {
	mu      sync.Mutex
	entries []logEntry
	phase   map[string]int // node → phase, moved on by the test's driver
}

// logEntry is one request, recorded when its answer came back.
type logEntry struct {
	writer, method, path string
	node                 string // the provider in the path, "" if none
	status               int
	at                   time.Time
	phase                int
	// reserved is what a successful inventory write set (-1: not one);
	// ownerNova, for a successful trait write, whether OWNER_NOVA was in
	// the set (-1: not one).
	reserved, ownerNova int
}

var providerPath = regexp.MustCompile(`^/resource_providers/([0-9a-fA-F-]{36})(/[a-z_]+)?`)

func newWriterLog() *writerLog { return &writerLog{phase: map[string]int{}} }

// proxy starts a recording proxy for writer in front of target and
// returns its URL; it stops at the test's cleanup.
func (l *writerLog) proxy(t *testing.T, writer, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	// uWSGI's http-socket closes idle connections without warning.
	rp.Transport = &http.Transport{DisableKeepAlives: true}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		rp.ServeHTTP(sw, r)
		l.add(writer, r.Method, r.URL.Path, sw.status, body)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (l *writerLog) add(writer, method, path string, status int, body []byte) {
	e := logEntry{writer: writer, method: method, path: path, status: status, at: time.Now(), reserved: -1, ownerNova: -1}
	m := providerPath.FindStringSubmatch(path)
	if m != nil {
		e.node = m[1]
	}
	ok := status >= 200 && status < 300 && method != http.MethodGet
	switch {
	case m != nil && ok && m[2] == "/inventories":
		e.reserved = reservedIn(body)
	case m != nil && ok && m[2] == "/traits" && method == http.MethodPut:
		var doc struct {
			Traits []string `json:"traits"`
		}
		if json.Unmarshal(body, &doc) == nil {
			e.ownerNova = 0
			if slices.Contains(doc.Traits, "OWNER_NOVA") {
				e.ownerNova = 1
			}
		}
	}
	l.mu.Lock()
	e.phase = l.phase[e.node]
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

// reservedIn is the reserved of an inventory write's one class: a whole
// inventory (PUT …/inventories) or one class (PUT or POST); 0 for a
// delete, which leaves nothing reserved.
func reservedIn(body []byte) int {
	var whole struct {
		Inventories map[string]struct {
			Reserved int `json:"reserved"`
		} `json:"inventories"`
		Reserved *int `json:"reserved"`
	}
	if json.Unmarshal(body, &whole) != nil {
		return 0
	}
	if whole.Reserved != nil {
		return *whole.Reserved
	}
	for _, inv := range whole.Inventories {
		return inv.Reserved
	}
	return 0
}

// nextPhase marks that the test changed the node's state in Ironic: a
// change undone in a later phase is the node's state moving, not a
// flap.
func (l *writerLog) nextPhase(node string) {
	l.mu.Lock()
	l.phase[node]++
	l.mu.Unlock()
}

// seen counts writer's requests for path since t0.
func (l *writerLog) seen(writer, method, path string, since time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, e := range l.entries {
		if e.writer == writer && e.method == method && e.path == path && e.at.After(since) {
			n++
		}
	}
	return n
}

// nodeCounts is what each writer did to one node's provider.
type nodeCounts struct {
	// by writer
	invWrites, traitWrites, otherWrites, conflicts map[string]int
	// reservedFlaps and ownerFlaps count, by the writer that undid it,
	// a change of the other writer's undone within the same phase.
	reservedFlaps, ownerFlaps map[string]int
}

// counts tallies the log per node, over the cycles.
func (l *writerLog) counts(nodes []string) map[string]*nodeCounts {
	l.mu.Lock()
	entries := slices.Clone(l.entries)
	l.mu.Unlock()
	out := map[string]*nodeCounts{}
	for _, n := range nodes {
		c := &nodeCounts{invWrites: map[string]int{}, traitWrites: map[string]int{}, otherWrites: map[string]int{},
			conflicts: map[string]int{}, reservedFlaps: map[string]int{}, ownerFlaps: map[string]int{}}
		res, own := &flapTrack{}, &flapTrack{}
		for _, e := range entries {
			// Phase 0 is the set-up, before the first cycle.
			if e.node != n || e.phase == 0 {
				continue
			}
			switch {
			case e.status == http.StatusConflict:
				c.conflicts[e.writer]++
			case e.reserved >= 0:
				c.invWrites[e.writer]++
				res.see(e.writer, e.reserved, e.phase, c.reservedFlaps)
			case e.ownerNova >= 0:
				c.traitWrites[e.writer]++
				own.see(e.writer, e.ownerNova, e.phase, c.ownerFlaps)
			case e.method != http.MethodGet && e.status < 300:
				c.otherWrites[e.writer]++
			}
		}
		out[n] = c
	}
	return out
}

// flapTrack follows one value's successive changes.
type flapTrack struct {
	started     bool
	before, now int
	by          string
	phase       int
}

// see takes one write; a change by one writer that restores the value
// the other writer's last change replaced, in the same phase, is a flap.
func (f *flapTrack) see(writer string, v, phase int, flaps map[string]int) {
	if !f.started {
		f.started, f.before, f.now, f.by, f.phase = true, -1, v, writer, phase
		return
	}
	if v == f.now {
		return
	}
	if writer != f.by && v == f.before && phase == f.phase {
		flaps[writer]++
	}
	f.before, f.now, f.by, f.phase = f.now, v, writer, phase
}

func (c *nodeCounts) String() string {
	return fmt.Sprintf("inventory writes %v, trait writes %v, other writes %v, 409s %v, reserved flaps %v, OWNER_NOVA flaps %v",
		c.invWrites, c.traitWrites, c.otherWrites, c.conflicts, c.reservedFlaps, c.ownerFlaps)
}
