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
// config they ship: the image's config must exist and load, its API port
// is the one the image exposes and health-checks, and both put the
// database in the state directory they make writable.
func TestPackaging(t *testing.T) {
	df := readRepoFile(t, "Dockerfile")
	m := regexp.MustCompile(`(?m)^COPY (configs/\S+\.yaml) /etc/placement-syncd/placement-syncd.yaml$`).FindStringSubmatch(df)
	if m == nil {
		t.Fatal("Dockerfile does not copy a configs/*.yaml to /etc/placement-syncd/placement-syncd.yaml")
	}
	cfg, err := loadConfig(filepath.Join("../..", m[1]), nil)
	if err != nil {
		t.Fatalf("the image's config: %v", err)
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
