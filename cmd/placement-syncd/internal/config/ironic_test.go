package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestIronicConfig: microversion latest is accepted; a version below
// 1.46, a shard below 1.82 and a negative page size are refused with the
// file, line and key.
func TestIronicConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.yaml")
	load := func(ironic string) error {
		writeFile(t, path, "agent:\n  ironic:\n    enabled: true\n    endpoint: http://ironic:6385/v1\n"+ironic)
		_, err := loadConfig(path, nil)
		return err
	}
	for _, ok := range []string{"    microversion: latest\n", "    microversion: \"1.82\"\n    shard: s1\n    page_size: 100\n", ""} {
		if err := load(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	bad := map[string]string{
		"    microversion: \"1.45\"\n":                path + `:5: agent.ironic.microversion: microversion "1.45" is below 1.46`,
		"    microversion: newest\n":                  path + `:5: agent.ironic.microversion: microversion "newest" is not MAJOR.MINOR or "latest"`,
		"    microversion: \"1.80\"\n    shard: s1\n": path + `:5: agent.ironic.microversion: microversion "1.80" is below 1.82, which a shard needs`,
		"    page_size: -1\n":                         path + `:5: agent.ironic.page_size: must not be negative`,
	}
	for body, want := range bad {
		if err := load(body); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: error %v, want it to start with %s", body, err, want)
		}
	}
}
