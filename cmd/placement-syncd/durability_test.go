package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// TestDurabilityKill9 checks that a write the server acknowledged survives
// SIGKILL: it streams trait creations and deletions one at a time into a
// real `placement-syncd serve` child, kills it mid-stream, restarts it on
// the same database and requires every acknowledged write to be there
// (and every acknowledged delete to stay deleted), over several cycles.
func TestDurabilityKill9(t *testing.T) {
	dir := t.TempDir()
	bin := syncd.Binary(t)
	db := filepath.Join(dir, "placement.db")

	// acked holds every name whose latest acknowledged write created it
	// (true) or deleted it (false); inFlight the one being written at the
	// kill, whose outcome is unknown either way.
	acked := map[string]bool{}
	next, writes := 0, 0
	const cycles = 4
	for cycle := 0; cycle < cycles; cycle++ {
		srv := durStart(t, bin, db, filepath.Join(dir, fmt.Sprintf("server-%d.log", cycle)))
		durVerify(t, srv, acked, cycle)
		inFlight, n := durStream(t, srv, acked, &next, 25+10*cycle)
		writes += n
		t.Logf("cycle %d: killed after %d acknowledged writes (in flight: %q)", cycle, n, inFlight)
		srv = durStart(t, bin, db, filepath.Join(dir, fmt.Sprintf("server-%d-check.log", cycle)))
		// The write in flight may or may not have committed; learn which
		// and count it from now on, so later cycles check it too.
		if inFlight != "" {
			acked[inFlight] = durHasTrait(t, srv, inFlight)
		}
		durVerify(t, srv, acked, cycle)
		srv.kill(t)
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

// durServer is one running child.
type durServer struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
	client *http.Client
}

// durStart starts `serve` on db and waits, up to a deadline, until it
// answers HTTP.
func durStart(t *testing.T, bin, db, logPath string, extra ...string) *durServer {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		srv, err := durTryStart(t, bin, db, logPath, extra...)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("server did not start: %v", lastErr)
	return nil
}

// freeAddr is a loopback address nothing listens on now, for a child to
// listen on or a client to find closed. Another process could take it
// before the child binds; durStart then tries again with a new one.
func freeAddr(t *testing.T) string {
	t.Helper()
	addr, err := svcproc.FreeAddr()
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	return addr
}

func durTryStart(t *testing.T, bin, db, logPath string, extra ...string) (*durServer, error) {
	addr := freeAddr(t)
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("create log: %v", err)
	}
	cmd := exec.Command(bin, append([]string{"serve", "--listen", addr, "--db", db}, extra...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v", bin, err)
	}
	srv := &durServer{
		url: "http://" + addr, cmd: cmd, exited: make(chan struct{}), log: logPath,
		client: &http.Client{Timeout: 10 * time.Second},
	}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(srv.exited)
	}()
	t.Cleanup(func() { srv.kill(t) })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.url+"/", nil)
		if resp, err := srv.client.Do(req); err == nil {
			resp.Body.Close()
			return srv, nil
		}
		select {
		case <-srv.exited:
			return nil, fmt.Errorf("exited before answering: %s", srv.tail())
		case <-ctx.Done():
			srv.kill(t)
			return nil, fmt.Errorf("no answer on %s before the deadline: %s", addr, srv.tail())
		case <-tick.C:
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *durServer) kill(t *testing.T) {
	select {
	case <-s.exited:
		return
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill: %v", err)
	}
	<-s.exited
}

func (s *durServer) tail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

func (s *durServer) do(method, path string) (int, []byte, error) {
	req, err := http.NewRequest(method, s.url+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.6")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// durStream writes one request at a time, recording each acknowledged
// (2xx) outcome in acked, and SIGKILLs the server from another goroutine
// once killAfter writes of this cycle were acknowledged, so the kill lands
// while a write is in flight. It returns the name of the write that was
// sent but not acknowledged, if any, and how many writes were.
func durStream(t *testing.T, srv *durServer, acked map[string]bool, next *int, killAfter int) (string, int) {
	t.Helper()
	done := 0
	reached := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		<-reached
		srv.kill(t)
		close(killed)
	}()
	for {
		name, method, want := durNextWrite(acked, next)
		status, body, err := srv.do(method, "/traits/"+name)
		if err != nil {
			<-killed
			return name, done
		}
		if status < 200 || status > 299 {
			select {
			case <-srv.exited:
				<-killed
				return name, done
			default:
			}
			t.Fatalf("%s /traits/%s: %d %s", method, name, status, body)
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

func durHasTrait(t *testing.T, srv *durServer, name string) bool {
	t.Helper()
	status, body, err := srv.do("GET", "/traits/"+name)
	switch {
	case err != nil:
		t.Fatalf("GET /traits/%s: %v", name, err)
	case status == 204:
		return true
	case status == 404:
		return false
	}
	t.Fatalf("GET /traits/%s: %d %s", name, status, body)
	return false
}

// durVerify requires the server to hold exactly the traits whose last
// acknowledged write created them, among the ones the test wrote.
func durVerify(t *testing.T, srv *durServer, acked map[string]bool, cycle int) {
	t.Helper()
	status, body, err := srv.do("GET", "/traits?name=startswith:CUSTOM_T")
	if err != nil || status != 200 {
		t.Fatalf("list traits: %d %v %s", status, err, body)
	}
	var doc struct{ Traits []string }
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&doc); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
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
