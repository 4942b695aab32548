package config

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestConfig_MaxStaleness: database.change_feed.max_staleness defaults
// to 0 (never answer an unconfirmed read), takes a duration, and a
// negative one is refused with the file, the line and the key.
func TestConfig_MaxStaleness(t *testing.T) {
	if d := Default().Database.ChangeFeed.MaxStaleness; d != 0 {
		t.Errorf("default max_staleness %s, want 0", d)
	}
	dir := t.TempDir()
	write := func(name, value string) string {
		path := filepath.Join(dir, name)
		body := "database:\n  change_feed:\n    max_staleness: " + value + "\n"
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	cfg, err := loadConfig(write("good.yaml", "30s"), nil)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if d := cfg.Database.ChangeFeed.MaxStaleness; d != 30*time.Second {
		t.Errorf("max_staleness %s, want 30s", d)
	}
	bad := write("bad.yaml", "-1s")
	_, err = loadConfig(bad, nil)
	want := bad + ":3: database.change_feed.max_staleness: must not be negative, got -1s"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %v\nwant %s", err, want)
	}
}
