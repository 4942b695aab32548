package reconciler

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/testkit/mariadbtest"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// novaServicesTable is the layout of Nova's services table (nova/db/main
// models.py, Service with its soft-delete and timestamp columns).
const novaServicesTable = "CREATE TABLE services (" +
	"created_at DATETIME NULL, updated_at DATETIME NULL, deleted_at DATETIME NULL, " +
	"id INT NOT NULL AUTO_INCREMENT, host VARCHAR(255) NULL, `binary` VARCHAR(255) NULL, topic VARCHAR(255) NULL, " +
	"report_count INT NOT NULL, disabled TINYINT(1) NULL, deleted INT NULL, disabled_reason VARCHAR(255) NULL, " +
	"last_seen_up DATETIME NULL, forced_down TINYINT(1) NULL, version INT NULL, uuid VARCHAR(36) NULL, " +
	"PRIMARY KEY (id), UNIQUE KEY uniq_services0host0binary0deleted (host, `binary`, deleted), " +
	"UNIQUE KEY services_uuid_idx (uuid)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"

// novaService inserts one row as nova-compute would have registered it.
func novaService(id int, host, binary string, version int, disabled, forcedDown bool, deleted int) string {
	return fmt.Sprintf("INSERT INTO services (created_at, id, host, `binary`, topic, report_count, disabled, deleted, forced_down, version, uuid) "+
		"VALUES (NOW(), %d, '%s', '%s', 'compute', 10, %v, %d, %v, %d, '%08d-0000-4000-8000-000000000000')", id, host, binary, disabled, deleted, forcedDown, version, id)
}

// TestGate_CellDatabases reads versions from two real cell databases
// (MariaDB) with Nova's filters: a compute at 72 keeps the gate closed;
// deleted, forced-down and version-0 rows and other binaries do not
// count; a disabled compute counts. Upgrading it in the database opens
// the gate at the next read.
func TestGate_CellDatabases(t *testing.T) {
	// Not parallel: it is heavy, and the package's timing tests share
	// the machine with it.
	ctx := context.Background()
	db := mariadbtest.Start(t)
	cell1, cell2 := db.NewDatabase(t), db.NewDatabase(t)
	for _, c := range []struct {
		db   string
		rows []string
	}{
		{cell1, []string{novaServicesTable,
			novaService(1, "c1", ComputeBinary, 73, false, false, 0),
			novaService(2, "c2", ComputeBinary, 72, false, false, 0),
			novaService(3, "gone", ComputeBinary, 60, false, false, 3),
			novaService(4, "fd", ComputeBinary, 50, false, true, 0),
			novaService(5, "cond", "nova-conductor", 60, false, false, 0),
			novaService(6, "fresh", ComputeBinary, 0, false, false, 0)}},
		{cell2, []string{novaServicesTable,
			novaService(1, "c3", ComputeBinary, 80, false, false, 0),
			novaService(2, "c4", ComputeBinary, 73, true, false, 0)}},
	} {
		if err := db.Exec(ctx, c.db, c.rows...); err != nil {
			t.Fatal(err)
		}
	}
	e := newEnv(t, placementtest.Ours)
	cells := novaclient.CellDatabases{Cells: []novaclient.CellDatabase{{Name: "cell1", DSN: db.DSN(cell1)}, {Name: "cell2", DSN: db.DSN(cell2)}}, Complete: true}
	r, err := New(Options{Placement: e.pl, Computes: cells})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RefreshComputes(ctx); err != nil {
		t.Fatal(err)
	}
	if g := r.Gate(); g.Open || g.Computes != 4 || g.MinVersion != 72 || !slices.Equal(g.Behind, []string{"c2"}) || len(g.Unknown) != 0 {
		t.Fatalf("gate with c2 at 72 = %+v, want closed, 4 computes, c2 behind", g)
	}
	t.Logf("c2 at 72 in cell1: open=%v %q behind=%v", r.Gate().Open, r.Gate().Reason, r.Gate().Behind)
	// An unauthenticated heartbeat claiming 73 for c2 changes nothing:
	// the cell database has the version.
	if err := r.heartbeat(ServiceRecord{Host: "c2", Binary: ComputeBinary, Version: 73}, false); err != nil {
		t.Fatal(err)
	}
	if err := db.Exec(ctx, cell1, "UPDATE services SET version = 73 WHERE host = 'c2'"); err != nil {
		t.Fatal(err)
	}
	if g := r.Gate(); g.Open {
		t.Fatalf("gate opened before the databases were read again: %+v", g)
	}
	if err := r.RefreshComputes(ctx); err != nil {
		t.Fatal(err)
	}
	if g := r.Gate(); !g.Open || g.MinVersion != 73 || g.Computes != 4 {
		t.Fatalf("gate after upgrading c2 = %+v, want open", g)
	}
	t.Logf("c2 upgraded to 73: open=%v %q", r.Gate().Open, r.Gate().Reason)

	// A cell that cannot be read is an error that the gate shows.
	bad := novaclient.CellDatabases{Cells: append(cells.Cells, novaclient.CellDatabase{Name: "cell3", DSN: db.DSN("no_such_cell")}), Complete: true}
	if _, err := bad.Computes(ctx); err == nil || !strings.Contains(err.Error(), "cell3") {
		t.Fatalf("unreadable cell: %v", err)
	}
}

// TestGate_UnauthenticatedHeartbeat is Why §1: with no token on the
// endpoint a heartbeat is accepted (204) but gives no version, so it
// cannot open the gate; with the token it does.
func TestGate_UnauthenticatedHeartbeat(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"", "s3cret"} {
		f := newRunnerFixture(t, Options{Token: token})
		f.e.nova.setServices([]doubleService{{Host: "x", Binary: ComputeBinary}})
		if err := f.r.RefreshComputes(context.Background()); err != nil {
			t.Fatal(err)
		}
		status, body := endpointDo(t, f.r.Handler(), http.MethodPost, "/v1/services", token, `{"host":"x","binary":"nova-compute","version":73,"authenticated":true}`)
		if status != http.StatusNoContent {
			t.Fatalf("token %q: heartbeat %d %s", token, status, body)
		}
		if g := f.r.Gate(); g.Open != (token != "") {
			t.Fatalf("token %q: gate %+v, want open only when authenticated", token, g)
		}
	}
}
