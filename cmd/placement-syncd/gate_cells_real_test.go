package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/novatest"
)

// TestE2E_GateUnseenCellRealNova: the real nova-api with three cells
// (cell0, cell1, cell2) and a compute in cell2 at 72, which Nova itself
// says keeps the minimum below 73. A config listing cell_databases for
// cell0 and cell1 only, with neither api_database nor a compute API,
// cannot see cell2: the gate stays closed, its reason naming what is
// missing. Asserting the list complete (cell_databases_complete: true,
// the behaviour before) opens it on cell1 alone, which is why it is not
// the default; a compute API or the API database added shows cell2's
// compute and keeps it closed for what it is.
func TestE2E_GateUnseenCellRealNova(t *testing.T) {
	ctx := context.Background()
	n := realNova.Get(t)
	if err := n.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := n.AddComputes(ctx, novatest.Compute{Cell: "cell1", Host: "seen1", Version: 73}, novatest.Compute{Cell: "cell1", Host: "seen2", Version: 73},
		novatest.Compute{Cell: "cell2", Host: "unseen", Version: 72}); err != nil {
		t.Fatal(err)
	}
	if open, err := n.GateOpensPerNova(ctx, 73); err != nil || open {
		t.Fatalf("Nova's own minimum version reaches 73: %v, %v; want not", open, err)
	}
	dir := t.TempDir()
	base := fmt.Sprintf("reconciler:\n  listen: %s\n  state_file: %s\n  nova:\n    cell_databases:\n      - {name: cell0, dsn: %q}\n      - {name: cell1, dsn: %q}\n",
		freeAddr(t), filepath.Join(dir, "state.json"), n.Cell0, n.Cell("cell1").URL)
	for _, c := range []struct {
		name, extra string
		want        []string
		notWant     []string
	}{
		{"cells alone", "", []string{"OWNER_NOVA gate: closed", "a cell of Nova's may be missing",
			"cell_databases lists only cell0, cell1", "reconciler.nova.api_database", "reconciler.nova.endpoint or cloud", "cell_databases_complete: true"}, []string{"all 2"}},
		{"asserted complete", "    cell_databases_complete: true\n", []string{"OWNER_NOVA gate: open", "all 2 nova-compute services at version 73"}, nil},
		{"with the compute API", fmt.Sprintf("    endpoint: %s\n    token: %s\n", n.Endpoint, novatest.Token),
			[]string{"OWNER_NOVA gate: closed", "in no configured cell database", "unseen"}, []string{"may be missing"}},
		{"with the API database", fmt.Sprintf("    api_database: %q\n", n.APIDatabase),
			[]string{"OWNER_NOVA gate: closed", "1 of 3 nova-compute services below version 73 (minimum 72)"}, []string{"may be missing"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(dir, "gate.yaml")
			writeFile(t, cfg, base+c.extra)
			r := syncd.Exec(t, dir, "gate", "--config", cfg)
			wantOutput(t, r, exitOK, c.want, nil)
			for _, w := range c.notWant {
				if strings.Contains(r.Stdout, w) {
					t.Errorf("stdout contains %q:\n%s", w, r.Stdout)
				}
			}
		})
	}
}
