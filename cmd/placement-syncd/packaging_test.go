package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPackaging keeps the Dockerfile and the systemd unit in step with the
// config they ship. The image's config must exist, listen on the network
// with Keystone, and refuse to start until the Keystone settings are
// filled in; then it loads, its API port is the one the image exposes
// and health-checks, and its database is in the volume. The systemd
// unit's config (configs/all-in-one.yaml, the Debian package's conffile)
// starts as shipped, on loopback only, with its database in the state
// directory.
func TestPackaging(t *testing.T) {
	df := readRepoFile(t, "Dockerfile")
	m := regexp.MustCompile(`(?m)^COPY (configs/\S+\.yaml) /etc/placement-syncd/placement-syncd.yaml$`).FindStringSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile does not copy a configs/*.yaml to /etc/placement-syncd/placement-syncd.yaml")
	}
	path := filepath.Join("../..", m[1])
	if _, err := loadConfig(path, nil); err == nil ||
		!strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), "keystone_authtoken.auth_url") ||
		!strings.Contains(err.Error(), "keystone_authtoken.password") {
		t.Errorf("the image's config %s should refuse to start naming file, line and the Keystone keys to fill in; got %v", m[1], err)
	}
	cfg := loadSample(t, path)
	if cfg.API.AuthStrategy != "keystone" {
		t.Errorf("the image's config authenticates with %s, want keystone", cfg.API.AuthStrategy)
	}
	_, port, _ := net.SplitHostPort(cfg.API.Listen)
	for _, want := range []string{
		"EXPOSE " + port + "\n",
		`"http://127.0.0.1:` + port + `/"`,
		`VOLUME ["/var/lib/placement-syncd"]`,
		`CMD ["serve", "--config", "/etc/placement-syncd/placement-syncd.yaml"]`,
		"USER placement:placement",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q (config %s listens on %s)", want, m[1], cfg.API.Listen)
		}
	}
	if !strings.HasPrefix(cfg.Database.Path, "/var/lib/placement-syncd/") {
		t.Errorf("%s: database.path %q is outside the volume and the StateDirectory", m[1], cfg.Database.Path)
	}

	unitCfg, err := loadConfig("../../configs/all-in-one.yaml", nil)
	if err != nil {
		t.Errorf("the systemd unit's config: %v", err)
	}
	if !isLoopback(unitCfg.API.Listen) || !isLoopback(unitCfg.Reconciler.Listen) {
		t.Errorf("configs/all-in-one.yaml listens on %s and %s, want loopback only", unitCfg.API.Listen, unitCfg.Reconciler.Listen)
	}
	if !strings.HasPrefix(unitCfg.Database.Path, "/var/lib/placement-syncd/") {
		t.Errorf("configs/all-in-one.yaml: database.path %q is outside the StateDirectory", unitCfg.Database.Path)
	}

	unit := readRepoFile(t, "packaging/systemd/placement-syncd.service")
	for _, want := range []string{
		"ExecStart=/usr/bin/placement-syncd serve --config /etc/placement-syncd/placement-syncd.yaml\n",
		"StateDirectory=placement-syncd\n",
		"Restart=on-failure\n",
		"RestartPreventExitStatus=" + strconv.Itoa(exitUsage) + " " + strconv.Itoa(exitSchema) + "\n",
		"ProtectSystem=strict\n",
		"NoNewPrivileges=yes\n",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("systemd unit lacks %q", want)
		}
	}
}

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../..", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
