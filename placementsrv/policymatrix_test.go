package placementsrv_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// caller is a noauth2 identity: the token is user:project, the roles go
// in X-Roles (none sent: noauth2 gives the user admin the admin role),
// and a system-scoped caller sends OpenStack-System-Scope.
type caller struct {
	name, token, roles string
	system             bool
}

// callers are the matrix's columns. The last is the token tests and
// tools use, admin alone in project admin, without the reader role.
func callers() []caller {
	return []caller{
		{"project admin", "padmin:p1", "admin,member,reader", false},
		{"project member", "pmember:p1", "member,reader", false},
		{"project reader", "preader:p1", "reader", false},
		{"service", "nova:service", "service", false},
		{"system admin", "sadmin", "admin,member,reader", true},
		{"system reader", "sreader", "reader", true},
		{"admin user", "admin", "", false},
	}
}

// mode is a release with its oslo.policy enforcement settings.
type mode struct {
	rel                release.Release
	scope, newDefaults bool
}

func (m mode) String() string {
	return fmt.Sprintf("%s scope=%t new_defaults=%t", m.rel, m.scope, m.newDefaults)
}

// modes are each release in its released defaults, then in the other
// pair: 8.0.0 (both off), 8.0.0 secure, 15.0.0 (both on), 15.0.0 legacy.
func modes() []mode {
	return []mode{{release.V8, false, false}, {release.V8, true, true}, {release.V15, true, true}, {release.V15, false, false}}
}

// world is one server of a mode, with the objects the rows rely on.
type world struct {
	t   *testing.T
	srv *placementtest.Server
	// boss is an admin every rule of the mode allows: system-scoped for
	// 8.0.0, project-scoped for 15.0.0.
	boss caller
	hc   *http.Client
}

// outcome is one caller's answer to one row's request.
type outcome struct {
	status int
	// refusal is a 403's content type and error document, without the
	// request id; empty for any other status.
	refusal string
	body    string
}

func (o outcome) letter() byte {
	if o.status == http.StatusForbidden {
		return '-'
	}
	return '+'
}

func newWorld(t *testing.T, srv *placementtest.Server, m mode) *world {
	cs := callers()
	w := &world{t: t, srv: srv, boss: cs[0], hc: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}}
	if m.rel == release.V8 {
		w.boss = cs[4]
	}
	w.admin(http.StatusOK, "POST", "/resource_providers", map[string]any{"name": "matrix-world", "uuid": worldRP})
	w.admin(http.StatusOK, "PUT", "/resource_providers/"+worldRP+"/inventories",
		map[string]any{"resource_provider_generation": 0, "inventories": map[string]any{"VCPU": map[string]any{"total": 1000}}})
	w.admin(http.StatusCreated, "PUT", "/resource_classes/"+worldName, nil)
	w.admin(http.StatusCreated, "PUT", "/traits/"+worldName, nil)
	w.admin(http.StatusNoContent, "PUT", "/allocations/"+worldConsumer, allocation())
	return w
}

// send makes one request as c at microversion 1.39.
func (w *world) send(c caller, method, path string, body any) outcome {
	w.t.Helper()
	h := map[string]string{"X-Auth-Token": c.token}
	if c.roles != "" {
		h["X-Roles"] = c.roles
	}
	if c.system {
		h["OpenStack-System-Scope"] = "all"
	}
	return w.sendAs(h, method, path, body)
}

// sendAs makes one request with the identity headers h at microversion
// 1.39.
func (w *world) sendAs(h map[string]string, method, path string, body any) outcome {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			w.t.Fatalf("marshal: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequest(method, w.srv.URL+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	for k, v := range h {
		// As sent: a canonical key would hide names such as X_Roles.
		r.Header[k] = []string{v}
	}
	r.Header.Set("Accept", "application/json")
	r.Header.Set("OpenStack-API-Version", "placement 1.39")
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := w.hc.Do(r)
	if err != nil {
		w.t.Fatalf("%s: %s %s: %v", w.srv, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatalf("%s: read %s %s: %v", w.srv, method, path, err)
	}
	o := outcome{status: resp.StatusCode, body: string(b)}
	if o.status == http.StatusForbidden {
		o.refusal = resp.Header.Get("Content-Type") + " " + withoutRequestID(w.t, b)
	}
	return o
}

// withoutRequestID is an error document with its request ids blanked.
func withoutRequestID(t *testing.T, b []byte) string {
	t.Helper()
	var doc map[string][]map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || len(doc["errors"]) == 0 {
		return fmt.Sprintf("not an error document: %q", b)
	}
	for _, e := range doc["errors"] {
		if _, ok := e["request_id"]; ok {
			e["request_id"] = "-"
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// admin makes a request as the boss and fails the test unless it gets
// want.
func (w *world) admin(want int, method, path string, body any) {
	w.t.Helper()
	if o := w.send(w.boss, method, path, body); o.status != want {
		w.t.Fatalf("%s: %s %s as %s: %d, want %d: %s", w.srv, method, path, w.boss.name, o.status, want, o.body)
	}
}

// startMode starts the reference of m's release with m's settings, and
// ours alike, each with its world.
func startMode(t *testing.T, m mode) (ref, ours *world) {
	t.Helper()
	env := []string{fmt.Sprintf("ENFORCE_SCOPE=%t", m.scope), fmt.Sprintf("ENFORCE_NEW_DEFAULTS=%t", m.newDefaults)}
	r := placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: m.rel, Env: env})
	enf, err := policy.New(policy.Options{EnforceScope: m.scope, EnforceNewDefaults: m.newDefaults, Release: m.rel})
	if err != nil {
		t.Fatal(err)
	}
	o := placementtest.StartOurs(t, placementtest.Options{Release: m.rel, Policy: enf})
	return newWorld(t, r, m), newWorld(t, o, m)
}

// TestPolicyMatrix sends every route's request as each caller, under
// both releases' rules in their default and their other enforcement
// modes, to the upstream reference of that release and to ours: both
// must refuse (403, the same error document) exactly where the expected
// table says, and answer the row's success status elsewhere.
func TestPolicyMatrix(t *testing.T) {
	rows, ms, cs := matrixRows(), modes(), callers()
	// seen[mode][row] and probed[mode][probe] are the reference's
	// outcome letters.
	seen, probed := make([][]string, len(ms)), make([][]string, len(ms))
	for mi, m := range ms {
		t.Run(m.String(), func(t *testing.T) {
			ref, ours := startMode(t, m)
			for ri, row := range rows {
				want := strings.Fields(row.want)[mi]
				got := make([]byte, len(cs))
				for ci, c := range cs {
					a, b := ref.ask(row, ri, ci), ours.ask(row, ri, ci)
					got[ci] = a.letter()
					checkCell(t, rowLabel(row, ri)+" as "+c.name, row.ok, want[ci], a, b)
				}
				seen[mi] = append(seen[mi], string(got))
			}
			probed[mi] = runProbes(t, ref, ours, mi)
		})
	}
	t.Log("\n" + formatMatrix(rows, ms, seen) + formatProbes(ms, probed))
}

// ask builds row's request for caller number c (making its objects as
// the boss) and sends it.
func (w *world) ask(row matrixRow, r, c int) outcome {
	w.t.Helper()
	q := row.build(w, r, c)
	return w.send(callers()[c], row.method, q.path, q.body)
}

// checkCell compares one caller's outcome on the reference (a) and ours
// (b) with each other and with the table's letter; ok is the status of
// an allowed request.
func checkCell(t *testing.T, name string, ok int, want byte, a, b outcome) {
	t.Helper()
	if a.letter() != want {
		t.Errorf("%s: the reference answered %d, the table says %c: %s", name, a.status, want, a.body)
	}
	if b.letter() != a.letter() {
		t.Errorf("%s: ours answered %d, the reference %d: %s", name, b.status, a.status, b.body)
	}
	if a.refusal != b.refusal {
		t.Errorf("%s: 403 documents differ:\nours      %s\nreference %s", name, b.refusal, a.refusal)
	}
	for _, o := range []struct {
		who string
		o   outcome
	}{{"reference", a}, {"ours", b}} {
		if o.o.status != http.StatusForbidden && o.o.status != ok {
			t.Errorf("%s: %s answered %d, want %d (the request should be valid): %s", name, o.who, o.o.status, ok, o.o.body)
		}
	}
}

// rowLabel names row number ri: its method and route, with the query
// for the total usages rows, which differ by query only (their builders
// make nothing, so need no world).
func rowLabel(row matrixRow, ri int) string {
	path := row.route
	if row.route == "/usages" {
		path = row.build(nil, ri, 0).path
	}
	return fmt.Sprintf("%-6s %s", row.method, path)
}

// formatMatrix prints the reference's outcomes: a line per row, a column
// of caller letters per mode.
func formatMatrix(rows []matrixRow, ms []mode, seen [][]string) string {
	var b strings.Builder
	b.WriteString("callers: A project admin, M project member, R project reader, S service, a system admin, r system reader, L admin user; + allowed, - 403\n")
	fmt.Fprintf(&b, "%-64s", "")
	for _, m := range ms {
		fmt.Fprintf(&b, " %-14s", fmt.Sprintf("%s %s", m.rel, map[bool]string{true: "secure", false: "legacy"}[m.newDefaults]))
	}
	fmt.Fprintf(&b, "\n%-64s%s\n", "", strings.Repeat(" AMRSarL       ", len(ms)))
	for ri, row := range rows {
		fmt.Fprintf(&b, "%-64s", rowLabel(row, ri))
		for mi := range ms {
			cell := "?"
			if ri < len(seen[mi]) {
				cell = seen[mi][ri]
			}
			fmt.Fprintf(&b, " %-14s", cell)
		}
		b.WriteString("\n")
	}
	return b.String()
}
