package ironictest

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// cloneScript copies a node's row (and its traits) in Ironic's SQLite
// database n times under new uuids and names, printing the uuids; with
// "delete" it removes the nodes whose uuids it reads from stdin. It runs
// under Debian's python3, whose sqlite3 module the database was made
// with.
const cloneScript = `
import sqlite3, sys, uuid
db, mode = sys.argv[1], sys.argv[2]
c = sqlite3.connect(db, timeout=60)
if mode == "delete":
    ids = [l.strip() for l in sys.stdin if l.strip()]
    with c:
        for u in ids:
            c.execute("DELETE FROM node_traits WHERE node_id IN (SELECT id FROM nodes WHERE uuid = ?)", (u,))
            c.execute("DELETE FROM nodes WHERE uuid = ?", (u,))
    sys.exit(0)
template, n = mode, int(sys.argv[3])
cols = [r[1] for r in c.execute("PRAGMA table_info(nodes)") if r[1] != "id"]
row = dict(zip(cols, c.execute("SELECT %s FROM nodes WHERE uuid = ?" % ",".join(cols), (template,)).fetchone()))
traits = c.execute("SELECT t.created_at, t.version, t.trait FROM node_traits t JOIN nodes n ON n.id = t.node_id WHERE n.uuid = ?", (template,)).fetchall()
out = []
with c:
    for i in range(n):
        row["uuid"], row["name"] = str(uuid.uuid4()), "%s-clone-%d" % (row["name"] or "node", i)
        cur = c.execute("INSERT INTO nodes (%s) VALUES (%s)" % (",".join(cols), ",".join("?" * len(cols))), [row[k] for k in cols])
        for t in traits:
            c.execute("INSERT INTO node_traits (created_at, version, node_id, trait) VALUES (?, ?, ?, ?)", (t[0], t[1], cur.lastrowid, t[2]))
        out.append(row["uuid"])
print("\n".join(out))
`

// CloneNodes copies a node n times, straight into Ironic's database, in
// the state the node is in: the way to have thousands of available nodes
// in seconds where enrolling and cleaning each through the API takes
// about a second a node. The clones are deleted at the test's cleanup.
func (ir *Ironic) CloneNodes(t testing.TB, template string, n int) []string {
	t.Helper()
	db := filepath.Join(ir.dir, "ironic.sqlite")
	cmd := exec.Command("/usr/bin/python3", "-c", cloneScript, db, template, strconv.Itoa(n))
	cmd.Env = cleanEnv(ir.dir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ironictest: clone node %s: %v: %s", template, err, stderrOf(err))
	}
	uuids := strings.Fields(string(out))
	if len(uuids) != n {
		t.Fatalf("ironictest: cloned %d nodes, want %d", len(uuids), n)
	}
	t.Cleanup(func() {
		del := exec.Command("/usr/bin/python3", "-c", cloneScript, db, "delete")
		del.Env = cleanEnv(ir.dir)
		del.Stdin = strings.NewReader(strings.Join(uuids, "\n"))
		if out, err := del.CombinedOutput(); err != nil {
			t.Errorf("ironictest: delete clones: %v: %s", err, out)
		}
	})
	return uuids
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return svcproc.Tail(string(ee.Stderr), 2000)
	}
	return fmt.Sprint(err)
}
