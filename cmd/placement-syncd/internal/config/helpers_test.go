package config

import (
	"os"
	"testing"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loadConfig is Load of one YAML file and overrides.
func loadConfig(path string, overrides []Override) (Config, error) {
	cfg, _, err := Load(Sources{YAML: path, Overrides: overrides})
	return cfg, err
}
