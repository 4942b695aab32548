package novatest

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/testkit/novaconf"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// Compute is one nova-compute service to register as rows in a cell.
type Compute struct {
	Cell    string
	Host    string
	Version int
	// Nodes is the number of compute nodes (1 when 0; an Ironic host
	// has many). Their uuids are returned by AddComputes.
	Nodes int
}

// AddComputes inserts each compute's services row and compute_nodes rows
// into its cell database, as a starting nova-compute would, then maps the
// hosts with `nova-manage cell_v2 discover_hosts`. It returns the compute
// node uuids by host, in order. The services last reported an hour ago,
// so nova-api sees them down and a disable makes no call to a compute
// (there is none to answer it).
func (n *Nova) AddComputes(ctx context.Context, computes ...Compute) (map[string][]string, error) {
	nodes := map[string][]string{}
	for _, c := range computes {
		cell := n.cells[c.Cell]
		if cell == nil {
			return nil, fmt.Errorf("novatest: no cell %q", c.Cell)
		}
		n.mu.Lock()
		id := n.nextID
		n.nextID++
		n.mu.Unlock()
		stmts := []string{fmt.Sprintf("INSERT INTO services (created_at, updated_at, id, host, `binary`, topic, report_count, disabled, deleted, forced_down, version, uuid) "+
			"VALUES (NOW() - INTERVAL 1 HOUR, NOW() - INTERVAL 1 HOUR, %d, '%s', 'nova-compute', 'compute', 1, 0, 0, 0, %d, '%s')", id, c.Host, c.Version, uuidOf("5e", id, 0))}
		for i := range max(c.Nodes, 1) {
			u := uuidOf("c0", id, i)
			name := c.Host
			if c.Nodes > 1 {
				name = u // an Ironic node's hypervisor_hostname is its uuid
			}
			nodes[c.Host] = append(nodes[c.Host], u)
			stmts = append(stmts, fmt.Sprintf("INSERT INTO compute_nodes (created_at, service_id, vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used, local_gb_used, "+
				"hypervisor_type, hypervisor_version, cpu_info, hypervisor_hostname, deleted, host, uuid, mapped) "+
				"VALUES (NOW(), %d, 4, 4096, 40, 0, 0, 0, 'fake', 1, '{}', '%s', 0, '%s', '%s', 0)", id, name, c.Host, u))
		}
		if err := n.DB.Exec(ctx, cell.Database, stmts...); err != nil {
			return nil, err
		}
	}
	if _, err := n.Manage(ctx, nil, "cell_v2", "discover_hosts"); err != nil {
		return nil, err
	}
	return nodes, nil
}

// uuidOf is a fixed, readable uuid for row id (and node i).
func uuidOf(kind string, id, i int) string {
	return fmt.Sprintf("%s%06d-0000-4000-8000-%012d", kind, id, i)
}

// SetVersion sets the service version of host's nova-compute row, as an
// upgraded (or downgraded) compute would at its next start.
func (n *Nova) SetVersion(ctx context.Context, cell, host string, version int) error {
	c := n.cells[cell]
	if c == nil {
		return fmt.Errorf("novatest: no cell %q", cell)
	}
	return n.DB.Exec(ctx, c.Database, fmt.Sprintf("UPDATE services SET version = %d WHERE host = '%s' AND `binary` = 'nova-compute' AND deleted = 0", version, host))
}

// Reset removes every compute, host mapping and aggregate, and makes
// every cell readable again: each test starts from empty cells.
func (n *Nova) Reset(ctx context.Context) error {
	for _, name := range cellNames() {
		if err := n.Readable(ctx, name); err != nil {
			return err
		}
		if err := n.DB.Exec(ctx, n.cells[name].Database, "DELETE FROM compute_nodes", "DELETE FROM services"); err != nil {
			return err
		}
	}
	return n.DB.Exec(ctx, "nova_api", "DELETE FROM host_mappings", "DELETE FROM aggregate_hosts",
		"DELETE FROM aggregate_metadata", "DELETE FROM aggregates")
}

// Unreadable takes the cell's grants away from its user and ends that
// user's open connections: every reader of the cell (nova-api, Nova's
// own minimum-version query, the code under test) fails from then on,
// with "access denied", as after a lost grant or a broken database.
func (n *Nova) Unreadable(ctx context.Context, cell string) error {
	c := n.cells[cell]
	if c == nil {
		return fmt.Errorf("novatest: no cell %q", cell)
	}
	if err := n.DB.Exec(ctx, "", fmt.Sprintf("REVOKE ALL ON %s.* FROM '%s'@'127.0.0.1'", c.Database, c.User)); err != nil {
		return err
	}
	return n.killConnections(ctx, c.User)
}

// Readable gives the cell's grants back.
func (n *Nova) Readable(ctx context.Context, cell string) error {
	return n.DB.Exec(ctx, "", n.cells[cell].grant())
}

// killConnections ends every connection of user: a revoked database
// grant is only checked when a connection opens the database.
func (n *Nova) killConnections(ctx context.Context, user string) error {
	db, err := sql.Open("mysql", n.DB.DSN(""))
	if err != nil {
		return fmt.Errorf("novatest: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT id FROM information_schema.processlist WHERE user = ?", user)
	if err != nil {
		return fmt.Errorf("novatest: list connections: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("novatest: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	for _, id := range ids {
		// A connection that ended on its own meanwhile is fine.
		_, _ = db.ExecContext(ctx, "KILL "+strconv.FormatInt(id, 10))
	}
	return nil
}

// oracleScript asks Nova itself for the minimum nova-compute version over
// all cells, requiring every cell to answer, as Nova's scheduler decides
// whether to filter on OWNER_NOVA.
const oracleScript = `
import sys
from nova import config, context, exception, objects
config.parse_args(['novatest-oracle', '--config-file', sys.argv[1]])
objects.register_all()
ctx = context.get_admin_context()
try:
    v = objects.service.get_minimum_version_all_cells(ctx, ['nova-compute'], require_all=True)
except exception.CellTimeout as e:
    print('NOVATEST-ORACLE raised %s' % type(e).__name__)
else:
    print('NOVATEST-ORACLE minimum %d' % v)
`

var oracleLine = regexp.MustCompile(`(?m)^NOVATEST-ORACLE (raised|minimum) (\S+)$`)

// MinimumVersion runs Nova's own get_minimum_version_all_cells(ctx,
// ['nova-compute'], require_all=True) with the harness's nova.conf.
// raised is true when Nova raised because a cell did not answer.
func (n *Nova) MinimumVersion(ctx context.Context) (version int, raised bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, novaconf.Python, "-c", oracleScript, n.Conf)
	cmd.Env, cmd.Dir = n.env(), n.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, false, fmt.Errorf("novatest: oracle: %w\n%s", err, svcproc.Tail(string(out), 3000))
	}
	m := oracleLine.FindStringSubmatch(string(out))
	if m == nil {
		return 0, false, fmt.Errorf("novatest: oracle said nothing readable:\n%s", svcproc.Tail(string(out), 3000))
	}
	if m[1] == "raised" {
		return 0, true, nil
	}
	v, err := strconv.Atoi(strings.TrimSpace(m[2]))
	if err != nil {
		return 0, false, fmt.Errorf("novatest: oracle: %w", err)
	}
	return v, false, nil
}

// GateOpensPerNova is the oracle's verdict for the OWNER_NOVA gate: Nova
// answers without raising and its minimum is at least required.
func (n *Nova) GateOpensPerNova(ctx context.Context, required int) (bool, error) {
	v, raised, err := n.MinimumVersion(ctx)
	if err != nil {
		return false, err
	}
	return !raised && v >= required, nil
}
