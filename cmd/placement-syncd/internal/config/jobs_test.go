package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/reconciler"
)

// reconciler.jobs takes every job the reconciler registers, by its name,
// with no list of its own here, and refuses any other name at its line.
func TestJobs_ByReconcilerName(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	body := "reconciler:\n  nova:\n    file: nova.json\n  jobs:\n"
	for _, name := range reconciler.JobNames() {
		body += "    " + name + ": \"@every 1h\"\n"
	}
	writeFile(t, good, body)
	cfg, err := loadConfig(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range reconciler.JobNames() {
		if cfg.Reconciler.Jobs[name] != "@every 1h" {
			t.Errorf("job %s: schedule %q", name, cfg.Reconciler.Jobs[name])
		}
	}
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, bad, "reconciler:\n  jobs:\n    nightly: \"@every 1h\"\n    aggregates: \"every day\"\n")
	_, err = loadConfig(bad, nil)
	for _, want := range []string{bad + `:3: reconciler.jobs.nightly: unknown job "nightly" (known: ` + strings.Join(reconciler.JobNames(), ", ") + ")",
		bad + `:4: reconciler.jobs.aggregates: invalid cron schedule "every day"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
