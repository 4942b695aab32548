package novafull

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"
)

// run is the scenario's steps; each expected host follows from the
// capacities (moveComputes) and the servers already placed.
func (s *moveScenario) run() {
	f1 := s.bootOn("mm-f1", "mm-c") // c is full from now on
	x := s.bootOn("mm-x", "mm-a")

	// a fails: x is evacuated to b, the one host with room. Evacuation
	// comes first: the fake driver keeps a live-migrated server in its
	// source's memory, and an evacuation refuses a host where the driver
	// has it (a compute started again begins empty).
	s.evacuate(x, "mm-a", "mm-b")

	// Live migration to a named host, then to the scheduler's choice:
	// the source is excluded and c is full, so b.
	s.liveMigrate(x, "mm-a", "mm-a", "mm-a=1024 mm-b=0 mm-c=1024")
	s.liveMigrate(x, "", "mm-b", "mm-a=0 mm-b=1024 mm-c=1024")

	// Shelve offload frees b; with b taken by another server, unshelve
	// has only a.
	snapshot := s.shelve(x)
	f2 := s.bootOn("mm-f2", "mm-b")
	s.unshelve(x, snapshot, "mm-a", "mm-a=1024 mm-b=1024 mm-c=1024")

	// Rebuild on full b, with the same image and with a new one.
	s.rebuild(f2, ImageID, "same image")
	s.rebuild(f2, s.uploadImage("mm-rebuild"), "new image")

	s.delete(x)
	s.delete(f2)
	s.expect("x and f2 deleted", f2, "none", "mm-a=0 mm-b=0 mm-c=1024")
	s.antiAffinity()
	s.cleanEnd(f1, x, f2)
}

// liveMigrate live-migrates the server to host ("": the scheduler
// chooses) and checks that it landed on want, holding only there, and
// that the migration's allocation (the source's, during the move) is
// gone.
func (s *moveScenario) liveMigrate(id, host, want, usages string) {
	s.t.Helper()
	var dest any
	step := "live migration, the scheduler's choice"
	if host != "" {
		dest, step = host, "live migration to "+host
	}
	s.action(id, map[string]any{"os-migrateLive": map[string]any{"host": dest, "block_migration": "auto"}})
	s.landed(id, "ACTIVE", want, "mm-small")
	mig, kind, _ := s.migrationOf(id)
	if kind != "live-migration" {
		s.t.Fatalf("%s: the latest migration is a %s", step, kind)
	}
	s.expect(step+": on "+want, id, want+":1024/1/1", usages)
	s.expect(step+": migration released", mig, "none", usages)
}

// evacuate kills from's compute, forces it down through os-services and
// evacuates the server: it lands on to, holding both hosts until from's
// compute comes back and cleans its own allocation; then from is
// forced up again (Nova refuses it before: the evacuation is still
// "done", not "completed").
func (s *moveScenario) evacuate(id, from, to string) {
	s.t.Helper()
	svc, _ := s.computeService(from)
	if err := s.n.StopCompute(from); err != nil {
		s.t.Fatal(err)
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPut, "/os-services/"+svc, map[string]any{"forced_down": true}, nil); err != nil {
		s.t.Fatal(err)
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, "/servers/"+id+"/action", map[string]any{"evacuate": map[string]any{}}, nil); err != nil {
		s.t.Fatal(err)
	}
	// Nova's compute saves the server ACTIVE before its resource tracker
	// moves it to the new host and marks the migration done (under a
	// lock the periodic update may hold): ACTIVE alone may still show
	// the old host, "done" may not.
	s.wait(id, "ACTIVE")
	s.waitMigration(id, "done")
	if srv := s.wait(id, "ACTIVE"); srv.Host != to {
		_, kind, status := s.migrationOf(id)
		s.t.Fatalf("evacuate: ACTIVE on %s, want %s; the %s is %s; its last action: %s\n%s", srv.Host, to, kind, status, s.lastAction(id), s.n.Logs())
	}
	s.record = append(s.record, "evacuate: ACTIVE on "+to)
	mig, kind, _ := s.migrationOf(id)
	both := fmt.Sprintf("%s:1024/1/1,%s:1024/1/1", from, to)
	s.expect(kind+" while "+from+" is down: the server holds both", id, both, "mm-a=1024 mm-b=1024 mm-c=1024")
	s.expect(kind+": migration holds nothing", mig, "none", "mm-a=1024 mm-b=1024 mm-c=1024")
	code, _, err := s.n.Do(s.ctx, http.MethodPut, "/os-services/"+svc, map[string]any{"forced_down": false}, nil)
	if err != nil || code != http.StatusBadRequest {
		s.t.Fatalf("forcing %s up before its compute ran again: %d %v, want 400", from, code, err)
	}
	s.record = append(s.record, "forcing "+from+" up before its compute ran again: refused")

	c := moveComputes()[slices.IndexFunc(moveComputes(), func(c Compute) bool { return c.Host == from })]
	start := time.Now()
	if err := s.n.startCompute(c); err != nil {
		s.t.Fatal(err)
	}
	s.settle(from+" back: its allocation cleaned", id, to+":1024/1/1", "mm-a=0 mm-b=1024 mm-c=1024", 4*time.Minute)
	s.t.Logf("%s's compute cleaned its allocation %s after it started", from, time.Since(start).Round(time.Millisecond))
	s.waitMigration(id, "completed")
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPut, "/os-services/"+svc, map[string]any{"forced_down": false}, nil); err != nil {
		s.t.Fatal(err)
	}
	if err := s.n.waitServices(s.ctx, nil, []string{from}, 2*time.Minute); err != nil {
		s.t.Fatal(err)
	}
}

// lastAction is the server's latest instance action with its events
// (their tracebacks too, for the admin), to say why a move failed.
func (s *moveScenario) lastAction(id string) string {
	var list struct {
		Actions []struct {
			RequestID string `json:"request_id"`
		} `json:"instanceActions"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/servers/"+id+"/os-instance-actions", nil, &list); err != nil || len(list.Actions) == 0 {
		return fmt.Sprintf("none (%v)", err)
	}
	_, body, err := s.n.Do(s.ctx, http.MethodGet, "/servers/"+id+"/os-instance-actions/"+list.Actions[0].RequestID, nil, nil)
	if err != nil {
		return err.Error()
	}
	return string(body)
}

// waitMigration waits until the server's latest migration has status.
func (s *moveScenario) waitMigration(id, status string) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		_, kind, got := s.migrationOf(id)
		if got == status {
			s.record = append(s.record, fmt.Sprintf("%s: %s", kind, status))
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s of %s is %s, want %s; its last action: %s\n%s", kind, id, got, status, s.lastAction(id), s.n.Logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// shelve shelves the server, which is offloaded at once
// (shelved_offload_time 0): no host, no allocation, and a snapshot in
// the Glance double, which it returns.
func (s *moveScenario) shelve(id string) string {
	s.t.Helper()
	s.action(id, map[string]any{"shelve": nil})
	s.landed(id, "SHELVED_OFFLOADED", "", "mm-small")
	s.expect("shelve offloaded", id, "none", "mm-a=0 mm-b=0 mm-c=1024")
	snaps := s.snapshots(id)
	if len(snaps) != 1 {
		s.t.Fatalf("shelve: %d snapshots of %s in Glance, want 1", len(snaps), id)
	}
	s.record = append(s.record, "shelve: one snapshot in Glance, "+snaps[0].Status)
	return snaps[0].ID
}

// unshelve unshelves the server, which lands on want, and checks that
// its snapshot is deleted from Glance.
func (s *moveScenario) unshelve(id, snapshot, want, usages string) {
	s.t.Helper()
	s.action(id, map[string]any{"unshelve": nil})
	s.landed(id, "ACTIVE", want, "mm-small")
	s.expect("unshelve: on "+want, id, want+":1024/1/1", usages)
	deadline := time.Now().Add(30 * time.Second)
	for len(s.snapshots(id)) != 0 {
		if time.Now().After(deadline) {
			s.t.Fatalf("unshelve: snapshot %s still in Glance", snapshot)
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.record = append(s.record, "unshelve: snapshot deleted")
}

type glanceImage struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Instance string `json:"instance_uuid"`
	Type     string `json:"image_type"`
}

// snapshots lists the Glance double's snapshots of the server.
func (s *moveScenario) snapshots(id string) []glanceImage {
	s.t.Helper()
	var out struct {
		Images []glanceImage `json:"images"`
	}
	s.glance(http.MethodGet, "/v2/images", nil, "", http.StatusOK, &out)
	return slices.DeleteFunc(out.Images, func(i glanceImage) bool { return i.Instance != id || i.Type != "snapshot" })
}

// uploadImage makes an active image in the Glance double as a user
// would (create, then upload its data) and returns its id; it is deleted
// at the end of the test.
func (s *moveScenario) uploadImage(name string) string {
	s.t.Helper()
	var img glanceImage
	s.glance(http.MethodPost, "/v2/images", map[string]any{"name": name, "container_format": "bare", "disk_format": "raw", "visibility": "public"}, "application/json", http.StatusCreated, &img)
	s.glance(http.MethodPut, "/v2/images/"+img.ID+"/file", []byte("rebuild"), "application/octet-stream", http.StatusNoContent, nil)
	s.t.Cleanup(func() { s.glance(http.MethodDelete, "/v2/images/"+img.ID, nil, "", http.StatusNoContent, nil) })
	return img.ID
}

// glance sends one request to the Glance double: body is JSON unless
// it is bytes.
func (s *moveScenario) glance(method, path string, body any, ctype string, want int, out any) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(s.ctx, method, s.n.glance.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		s.t.Fatalf("glance %s %s: %d %v, want %d: %s", method, path, resp.StatusCode, err, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("glance %s %s: %v: %s", method, path, err, data)
		}
	}
}

// rebuild rebuilds the server (on mm-b, which has no room left) from
// image: it stays where it is, with the same allocation. Nova 26.2 asks
// Placement nothing for a rebuild: for a new image its scheduler runs
// the filters on the server's own host only, the request marked a
// rebuild, and claims nothing.
func (s *moveScenario) rebuild(id, image, what string) {
	s.t.Helper()
	s.action(id, map[string]any{"rebuild": map[string]any{"imageRef": image}})
	s.landed(id, "ACTIVE", "mm-b", "mm-small")
	var out struct {
		Server struct {
			Image struct {
				ID string `json:"id"`
			} `json:"image"`
		} `json:"server"`
	}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodGet, "/servers/"+id, nil, &out); err != nil {
		s.t.Fatal(err)
	}
	if out.Server.Image.ID != image {
		s.t.Fatalf("rebuild with %s: image %s, want %s", what, out.Server.Image.ID, image)
	}
	s.expect("rebuild with "+what+" on full b: unchanged", id, "mm-b:1024/1/1", "mm-a=1024 mm-b=1024 mm-c=1024")
}

// antiAffinity boots three servers in an anti-affinity group while c is
// full: the first two land on a and b, and the third has no host left,
// though a still has room for it.
func (s *moveScenario) antiAffinity() {
	s.t.Helper()
	var out struct {
		Group struct {
			ID string `json:"id"`
		} `json:"server_group"`
	}
	body := map[string]any{"server_group": map[string]any{"name": "mm-anti", "policy": "anti-affinity"}}
	if err := s.n.Call(s.ctx, http.StatusOK, http.MethodPost, "/os-server-groups", body, &out); err != nil {
		s.t.Fatal(err)
	}
	s.group = out.Group.ID
	hints := map[string]any{"group": s.group}
	var hosts []string
	for _, name := range []string{"mm-g1", "mm-g2"} {
		srv := s.boot(name, nil, hints)
		if srv.Status != "ACTIVE" {
			s.t.Fatalf("%s: %s (%+v)\n%s", name, srv.Status, srv.Fault, s.n.Logs())
		}
		s.check(name, srv.ID, srv.Host+":1024/1/1", s.usages())
		hosts = append(hosts, srv.Host)
	}
	slices.Sort(hosts)
	if !slices.Equal(hosts, []string{"mm-a", "mm-b"}) {
		s.t.Fatalf("anti-affinity group on %v, want mm-a and mm-b", hosts)
	}
	s.record = append(s.record, fmt.Sprintf("anti-affinity: two servers on %v", hosts))
	s.noValidHost("anti-affinity: third server", s.boot("mm-g3", nil, hints), "mm-a=1024 mm-b=1024 mm-c=1024")
}

// cleanEnd deletes every server and the group, and checks that nothing
// is left: no allocation for the consumers, zero usage everywhere, no
// snapshot in Glance.
func (s *moveScenario) cleanEnd(consumers ...string) {
	s.t.Helper()
	s.cleanUp()
	if err := s.n.Call(s.ctx, http.StatusNotFound, http.MethodGet, "/os-server-groups/"+s.group, nil, nil); err != nil {
		s.t.Fatal(err)
	}
	s.group = ""
	for i, c := range consumers {
		s.expect(fmt.Sprintf("deleted all: consumer %d", i+1), c, "none", "mm-a=0 mm-b=0 mm-c=0")
	}
	s.expectProjectUnused()
}
