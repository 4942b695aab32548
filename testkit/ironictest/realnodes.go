package ironictest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// APIVersion is the microversion the helpers send: Ironic 21.4's
// highest (shards).
const APIVersion = "1.82"

// NodeSpec is what Enroll creates.
type NodeSpec struct {
	Name           string
	ResourceClass  string // "" leaves it unset
	Traits         []string
	ConductorGroup string
	Shard          string
}

// NodeState is the part of a node document the helpers read back.
type NodeState struct {
	UUID                 string   `json:"uuid"`
	ProvisionState       string   `json:"provision_state"`
	TargetProvisionState *string  `json:"target_provision_state"`
	PowerState           *string  `json:"power_state"`
	Maintenance          bool     `json:"maintenance"`
	InstanceUUID         *string  `json:"instance_uuid"`
	ResourceClass        *string  `json:"resource_class"`
	Traits               []string `json:"traits"`
	LastError            *string  `json:"last_error"`
}

// Do sends one API request (path from the root, e.g. /v1/nodes) with
// the helpers' microversion; body, when not nil, is sent as JSON. It
// returns the status and the body.
func (ir *Ironic) Do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("ironictest: %w", err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, ir.root+path, r)
	if err != nil {
		return 0, nil, fmt.Errorf("ironictest: %w", err)
	}
	req.Header.Set("X-OpenStack-Ironic-API-Version", APIVersion)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ir.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("ironictest: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("ironictest: %s %s: %w", method, path, err)
	}
	return resp.StatusCode, out, nil
}

func (ir *Ironic) getJSON(ctx context.Context, path string, v any) error {
	code, body, err := ir.Do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("ironictest: GET %s: %d %s", path, code, svcproc.Tail(string(body), 500))
	}
	return json.Unmarshal(body, v)
}

// must sends a request that must answer one of the wanted statuses.
func (ir *Ironic) must(t testing.TB, method, path string, body any, want ...int) []byte {
	t.Helper()
	code, out, err := ir.Do(context.Background(), method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		if code == w {
			return out
		}
	}
	t.Fatalf("ironictest: %s %s: %d %s", method, path, code, svcproc.Tail(string(out), 1000))
	return nil
}

// Enroll creates a fake-hardware node in "enroll" and deletes it at the
// test's cleanup.
func (ir *Ironic) Enroll(t testing.TB, s NodeSpec) string {
	t.Helper()
	doc := map[string]any{"driver": "fake-hardware"}
	for k, v := range map[string]string{"name": s.Name, "resource_class": s.ResourceClass,
		"conductor_group": s.ConductorGroup, "shard": s.Shard} {
		if v != "" {
			doc[k] = v
		}
	}
	var n NodeState
	if err := json.Unmarshal(ir.must(t, http.MethodPost, "/v1/nodes", doc, http.StatusCreated), &n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ir.remove(t, n.UUID) })
	if len(s.Traits) > 0 {
		ir.SetTraits(t, n.UUID, s.Traits...)
	}
	return n.UUID
}

// EnrollAvailable enrolls n nodes from s (named name-0, name-1, …),
// drives each through manage and provide (automated cleaning) to
// "available", eight at a time, and returns their uuids in order.
func (ir *Ironic) EnrollAvailable(t testing.TB, n int, s NodeSpec) []string {
	t.Helper()
	uuids := make([]string, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range uuids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			spec := s
			spec.Name = fmt.Sprintf("%s-%d", s.Name, i)
			uuids[i] = ir.Enroll(t, spec)
			ir.Manage(t, uuids[i])
			ir.Provide(t, uuids[i])
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return uuids
}

// remove deletes a node whatever its state: maintenance lets Ironic
// delete an active one. A node already gone is fine.
func (ir *Ironic) remove(t testing.TB, uuid string) {
	code, _, err := ir.Do(context.Background(), http.MethodDelete, "/v1/nodes/"+uuid, nil)
	if err != nil || code == http.StatusNoContent || code == http.StatusNotFound {
		return
	}
	_, _, _ = ir.Do(context.Background(), http.MethodPut, "/v1/nodes/"+uuid+"/maintenance", map[string]string{"reason": "test cleanup"})
	if code, body, err := ir.Do(context.Background(), http.MethodDelete, "/v1/nodes/"+uuid, nil); err == nil && code != http.StatusNoContent && code != http.StatusNotFound {
		t.Logf("ironictest: node %s left behind: %d %s", uuid, code, svcproc.Tail(string(body), 300))
	}
}

// Delete deletes a node, as `baremetal node delete` does (Ironic refuses
// an active node unless it is in maintenance).
func (ir *Ironic) Delete(t testing.TB, uuid string) {
	t.Helper()
	ir.must(t, http.MethodDelete, "/v1/nodes/"+uuid, nil, http.StatusNoContent)
}

// Get reads one node.
func (ir *Ironic) Get(t testing.TB, uuid string) NodeState {
	t.Helper()
	var n NodeState
	if err := json.Unmarshal(ir.must(t, http.MethodGet, "/v1/nodes/"+uuid, nil, http.StatusOK), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Provision asks for a provision state change (target "manage",
// "provide", "active", "deleted", "clean", "rescue", …) with extra body
// fields; it does not wait.
func (ir *Ironic) Provision(t testing.TB, uuid, target string, extra map[string]any) {
	t.Helper()
	body := map[string]any{"target": target}
	for k, v := range extra {
		body[k] = v
	}
	ir.must(t, http.MethodPut, "/v1/nodes/"+uuid+"/states/provision", body, http.StatusAccepted)
}

// Manage moves an enrolled node to "manageable", powers it off and
// waits: a fake node's power state is null until set or synced, and a
// null power state holds a node back.
func (ir *Ironic) Manage(t testing.TB, uuid string) {
	t.Helper()
	ir.Provision(t, uuid, "manage", nil)
	ir.WaitState(t, uuid, "manageable")
	ir.SetPower(t, uuid, "power off")
}

// SetPower asks for a power state ("power on", "power off") and waits
// until the node reports it.
func (ir *Ironic) SetPower(t testing.TB, uuid, state string) {
	t.Helper()
	ir.must(t, http.MethodPut, "/v1/nodes/"+uuid+"/states/power", map[string]string{"target": state}, http.StatusAccepted)
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if n := ir.Get(t, uuid); n.PowerState != nil && *n.PowerState == state {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("ironictest: node %s never reached %q: %s", uuid, state, deref(ir.Get(t, uuid).LastError))
}

// Provide cleans a manageable node (automated cleaning) and waits until
// it is "available".
func (ir *Ironic) Provide(t testing.TB, uuid string) {
	t.Helper()
	ir.Provision(t, uuid, "provide", nil)
	ir.WaitState(t, uuid, "available")
}

// Clean runs a manual cleaning of a manageable node (the fake BIOS
// interface's factory_reset step) and waits until it is manageable again.
func (ir *Ironic) Clean(t testing.TB, uuid string) {
	t.Helper()
	ir.Provision(t, uuid, "clean", map[string]any{"clean_steps": []map[string]string{{"interface": "bios", "step": "factory_reset"}}})
	ir.WaitState(t, uuid, "manageable")
}

// FailCleaning switches a manageable node to the direct deploy interface
// and provides it: Ironic boots a ramdisk that never calls back, so the
// node waits in "clean wait" until the callback timeout makes it "clean
// failed". It returns once the node is in "clean wait".
func (ir *Ironic) FailCleaning(t testing.TB, uuid string) {
	t.Helper()
	ir.Patch(t, uuid, Op("replace", "/deploy_interface", "direct"))
	ir.Provision(t, uuid, "provide", nil)
	ir.WaitState(t, uuid, "clean wait")
}

// Deploy gives an available node an instance and deploys it with the
// fake deploy interface, waiting until it is "active".
func (ir *Ironic) Deploy(t testing.TB, uuid, instance string) {
	t.Helper()
	ir.Patch(t, uuid, Op("add", "/instance_uuid", instance))
	ir.Provision(t, uuid, "active", nil)
	ir.WaitState(t, uuid, "active")
}

// FailDeploy gives an available node an instance and deploys it with the
// direct interface from an image Ironic is not allowed to read: the
// deploy fails and the node is left in "deploy failed", instance kept.
func (ir *Ironic) FailDeploy(t testing.TB, uuid, instance string) {
	t.Helper()
	img := filepath.Join(ir.dir, "tmp", "image.raw")
	if err := os.WriteFile(img, make([]byte, 512), 0o644); err != nil {
		t.Fatal(err)
	}
	ir.Patch(t, uuid, Op("replace", "/deploy_interface", "direct"), Op("add", "/instance_uuid", instance),
		Op("add", "/instance_info", map[string]string{"image_source": "file://" + img,
			"image_checksum": "bf619eac0cdf3f68d496ea9344137e8b", "image_type": "whole-disk"}))
	ir.Provision(t, uuid, "active", nil)
	ir.WaitState(t, uuid, "deploy failed")
}

// Undeploy tears an instance down (with automated cleaning) and waits
// until the node is "available".
func (ir *Ironic) Undeploy(t testing.TB, uuid string) {
	t.Helper()
	ir.Provision(t, uuid, "deleted", nil)
	ir.WaitState(t, uuid, "available")
}

// Rescue moves an active node to "rescue" (the fake rescue interface).
func (ir *Ironic) Rescue(t testing.TB, uuid string) {
	t.Helper()
	ir.Provision(t, uuid, "rescue", map[string]any{"rescue_password": "secret"})
	ir.WaitState(t, uuid, "rescue")
}

// Unrescue moves a rescued node back to "active".
func (ir *Ironic) Unrescue(t testing.TB, uuid string) {
	t.Helper()
	ir.Provision(t, uuid, "unrescue", nil)
	ir.WaitState(t, uuid, "active")
}

// SetMaintenance puts a node in maintenance or takes it out.
func (ir *Ironic) SetMaintenance(t testing.TB, uuid string, on bool) {
	t.Helper()
	if on {
		ir.must(t, http.MethodPut, "/v1/nodes/"+uuid+"/maintenance", map[string]string{"reason": "test"}, http.StatusAccepted)
		return
	}
	ir.must(t, http.MethodDelete, "/v1/nodes/"+uuid+"/maintenance", nil, http.StatusAccepted)
}

// SetTraits replaces a node's traits.
func (ir *Ironic) SetTraits(t testing.TB, uuid string, traits ...string) {
	t.Helper()
	if traits == nil {
		traits = []string{}
	}
	ir.must(t, http.MethodPut, "/v1/nodes/"+uuid+"/traits", map[string]any{"traits": traits}, http.StatusNoContent)
}

// PatchOp is one JSON patch operation.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// Op is a JSON patch operation; value is ignored for "remove".
func Op(op, path string, value any) PatchOp { return PatchOp{Op: op, Path: path, Value: value} }

// Patch applies JSON patch operations to a node (resource_class,
// conductor_group, shard, …).
func (ir *Ironic) Patch(t testing.TB, uuid string, ops ...PatchOp) {
	t.Helper()
	ir.must(t, http.MethodPatch, "/v1/nodes/"+uuid, ops, http.StatusOK)
}

// SetResourceClass sets a node's resource class, or clears it with "".
func (ir *Ironic) SetResourceClass(t testing.TB, uuid, rc string) {
	t.Helper()
	if rc == "" {
		ir.Patch(t, uuid, Op("remove", "/resource_class", nil))
		return
	}
	ir.Patch(t, uuid, Op("add", "/resource_class", rc))
}

// WaitState polls a node until its provision state is want with no
// transition under way, for up to two minutes; a node that settles in
// another failed state fails the test at once.
func (ir *Ironic) WaitState(t testing.TB, uuid, want string) NodeState {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	var n NodeState
	for time.Now().Before(deadline) {
		n = ir.Get(t, uuid)
		settled := n.TargetProvisionState == nil || want == "clean wait" || want == "clean failed" || want == "deploy failed"
		if n.ProvisionState == want && settled {
			return n
		}
		if n.ProvisionState != want && n.TargetProvisionState == nil && failed(n.ProvisionState) {
			t.Fatalf("ironictest: node %s is %q waiting for %q: %s", uuid, n.ProvisionState, want, deref(n.LastError))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("ironictest: node %s still %q (target %s) waiting for %q: %s", uuid, n.ProvisionState,
		deref(n.TargetProvisionState), want, deref(n.LastError))
	return n
}

func failed(state string) bool {
	switch state {
	case "clean failed", "deploy failed", "rescue failed", "inspect failed", "error":
		return true
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
