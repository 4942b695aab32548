package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestE2E_SyncAggregatesRefusesMassDeletion: the built binary, given an
// empty Nova answer after a good run, exits 7 and writes nothing (also
// in a dry run, which shows the refusal); --force goes through.
func TestE2E_SyncAggregatesRefusesMassDeletion(t *testing.T) {
	t.Parallel()
	e := newRecEnv(t)
	const (
		agg = "a0a0a0a0-0000-4000-8000-000000000001"
		h1  = "b0b0b0b0-0000-4000-8000-000000000001"
		h2  = "b0b0b0b0-0000-4000-8000-000000000002"
	)
	e.provider(t, h1, "h1")
	e.provider(t, h2, "h2")
	novaPath := e.writeNova(t, map[string][]string{agg: {"h1", "h2"}}, novaHost{"h1", h1}, novaHost{"h2", h2})
	cfg := e.config(t, "file.yaml", "nova:", "  file: "+novaPath)
	wantOutput(t, syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg), exitOK, nil, nil)

	writeFile(t, novaPath, `{"aggregates":[],"hypervisors":[]}`)
	state, err := os.ReadFile(filepath.Join(e.dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--dry-run"}, nil} {
		e.proxy.Reset()
		r := syncd.Exec(t, e.dir, append([]string{"sync-aggregates", "--config", cfg}, args...)...)
		wantOutput(t, r, exitRefused, []string{
			"refused: Nova listed no hypervisors, the last applied answer had 2; nothing written (--force applies it)",
			"plan: host h1: provider " + h1 + ": add [] remove [" + agg + "]",
		}, []string{"refused"})
		if e.proxy.Writes() != 0 {
			t.Errorf("%v: %d writes", args, e.proxy.Writes())
		}
	}
	for _, p := range []string{h1, h2} {
		if got := e.aggregates(t, p); len(got) != 1 || got[0] != agg {
			t.Errorf("provider %s has %v after the refusal", p, got)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(e.dir, "state.json")); string(after) != string(state) {
		t.Errorf("the refusal changed the state file:\n%s\n->\n%s", state, after)
	}

	r := syncd.Exec(t, e.dir, "sync-aggregates", "--config", cfg, "--force")
	wantOutput(t, r, exitOK, []string{"forced: Nova listed no hypervisors", "synced: host h1: provider " + h1 + ": added [] removed [" + agg + "]"}, nil)
	for _, p := range []string{h1, h2} {
		if got := e.aggregates(t, p); len(got) != 0 {
			t.Errorf("provider %s has %v after --force", p, got)
		}
	}
}
