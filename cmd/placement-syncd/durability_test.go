package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// TestDurabilityKill9 checks that a write the server acknowledged survives
// SIGKILL: it streams trait creations and deletions one at a time into a
// real `placement-syncd serve` child, kills it mid-stream, restarts it on
// the same database and requires every acknowledged write to be there
// (and every acknowledged delete to stay deleted), over several cycles.
func TestDurabilityKill9(t *testing.T) {
	db := filepath.Join(t.TempDir(), "placement.db")

	// acked holds every name whose latest acknowledged write created it
	// (true) or deleted it (false); inFlight the one being written at the
	// kill, whose outcome is unknown either way.
	acked := map[string]bool{}
	next, writes := 0, 0
	const cycles = 4
	for cycle := 0; cycle < cycles; cycle++ {
		srv := syncd.Start(t, daemontest.Options{Args: serveArgs(db)})
		durVerify(t, srv, acked, cycle)
		inFlight, n := durStream(t, srv, acked, &next, 25+10*cycle)
		writes += n
		t.Logf("cycle %d: killed after %d acknowledged writes (in flight: %q)", cycle, n, inFlight)
		srv = syncd.Start(t, daemontest.Options{Args: serveArgs(db)})
		// The write in flight may or may not have committed; learn which
		// and count it from now on, so later cycles check it too.
		if inFlight != "" {
			acked[inFlight] = durHasTrait(t, srv, inFlight)
		}
		durVerify(t, srv, acked, cycle)
		srv.Kill(t)
	}
	present := 0
	for _, created := range acked {
		if created {
			present++
		}
	}
	if writes < 25*cycles {
		t.Fatalf("only %d writes were acknowledged", writes)
	}
	t.Logf("verified %d acknowledged writes (%d traits now present, %d deleted) over %d kill/restart cycles",
		writes, present, len(acked)-present, cycles)
}

// durStream writes one request at a time, recording each acknowledged
// (2xx) outcome in acked, and SIGKILLs the server from another goroutine
// once killAfter writes of this cycle were acknowledged, so the kill lands
// while a write is in flight. It returns the name of the write that was
// sent but not acknowledged, if any, and how many writes were.
func durStream(t *testing.T, srv *daemontest.Daemon, acked map[string]bool, next *int, killAfter int) (string, int) {
	t.Helper()
	done := 0
	reached := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		<-reached
		srv.Kill(t)
		close(killed)
	}()
	for {
		name, method, want := durNextWrite(acked, next)
		r, err := srv.API.At("1.6").Do(context.Background(), method, "/traits/"+name, nil)
		if err != nil {
			<-killed
			return name, done
		}
		if r.Code < 200 || r.Code > 299 {
			select {
			case <-srv.Done():
				<-killed
				return name, done
			default:
			}
			t.Fatalf("%s /traits/%s: %d %s", method, name, r.Code, r.Body)
		}
		acked[name] = want
		done++
		if done == killAfter {
			close(reached)
		}
	}
}

// durNextWrite picks the next write: mostly creations of new traits, and
// every fifth a deletion of a trait created earlier.
func durNextWrite(acked map[string]bool, next *int) (name, method string, created bool) {
	if *next%5 == 4 {
		for n, present := range acked {
			if present {
				*next++
				return n, "DELETE", false
			}
		}
	}
	name = fmt.Sprintf("CUSTOM_T%d", *next)
	*next++
	return name, "PUT", true
}

func durHasTrait(t *testing.T, srv *daemontest.Daemon, name string) bool {
	t.Helper()
	r, err := srv.API.At("1.6").Do(t.Context(), "GET", "/traits/"+name, nil)
	switch {
	case err != nil:
		t.Fatalf("GET /traits/%s: %v", name, err)
	case r.Code == 204:
		return true
	case r.Code == 404:
		return false
	}
	t.Fatalf("GET /traits/%s: %d %s", name, r.Code, r.Body)
	return false
}

// durVerify requires the server to hold exactly the traits whose last
// acknowledged write created them, among the ones the test wrote.
func durVerify(t *testing.T, srv *daemontest.Daemon, acked map[string]bool, cycle int) {
	t.Helper()
	var doc struct{ Traits []string }
	srv.API.At("1.6").MustDo(t, 200, "GET", "/traits?name=startswith:CUSTOM_T", nil).Decode(t, &doc)
	have := map[string]bool{}
	for _, n := range doc.Traits {
		have[n] = true
	}
	var lost, resurrected, unknown []string
	for n, created := range acked {
		switch {
		case created && !have[n]:
			lost = append(lost, n)
		case !created && have[n]:
			resurrected = append(resurrected, n)
		}
	}
	for n := range have {
		if _, ok := acked[n]; !ok {
			unknown = append(unknown, n)
		}
	}
	if len(lost)+len(resurrected)+len(unknown) > 0 {
		t.Fatalf("cycle %d: lost acknowledged creations %v, acknowledged deletions undone %v, never-written traits %v",
			cycle, lost, resurrected, strings.Join(unknown, ","))
	}
}
