package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
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
	// What the image's config says (config's tests check it is a valid
	// sample once its secrets are filled in).
	cfg := config.Default()
	if err := yaml.Unmarshal([]byte(readRepoFile(t, m[1])), &cfg); err != nil {
		t.Fatal(err)
	}
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
	if !config.IsLoopback(unitCfg.API.Listen) || !config.IsLoopback(unitCfg.Reconciler.Listen) {
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

// TestPackagingAgentUnit keeps the agent-only host's unit in step with
// the Debian package and the config it ships as agent.yaml: the unit runs
// `agent` with it; the config refuses to start, naming file, line and
// placeholder, with the exit status the unit does not restart on; filled
// in, it loads, keeps its state file in the unit's StateDirectory and
// serves /metrics on the network.
func TestPackagingAgentUnit(t *testing.T) {
	unit := readRepoFile(t, "packaging/systemd/placement-syncd-agent.service")
	for _, want := range []string{
		"ExecStart=/usr/bin/placement-syncd agent --config /etc/placement-syncd/agent.yaml\n",
		"StateDirectory=placement-syncd\n",
		"User=placement-syncd\n",
		"Restart=on-failure\n",
		"RestartPreventExitStatus=" + strconv.Itoa(exitUsage) + "\n",
		"ProtectSystem=strict\n",
		"NoNewPrivileges=yes\n",
		"WantedBy=multi-user.target\n",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("agent unit lacks %q", want)
		}
	}
	deb := readRepoFile(t, "scripts/build-deb")
	for _, want := range []string{
		`install -m 0644 configs/agent-only.yaml "$pkg/etc/placement-syncd/agent.yaml"`,
		"packaging/systemd/placement-syncd-agent.service",
	} {
		if !strings.Contains(deb, want) {
			t.Errorf("scripts/build-deb lacks %q", want)
		}
	}
	if !strings.Contains(readRepoFile(t, "packaging/debian/conffiles"), "/etc/placement-syncd/agent.yaml\n") {
		t.Error("packaging/debian/conffiles lacks /etc/placement-syncd/agent.yaml")
	}
	for _, script := range []string{"postinst", "prerm", "postrm"} {
		if !strings.Contains(readRepoFile(t, "packaging/debian/"+script), "placement-syncd-agent.service") {
			t.Errorf("packaging/debian/%s does not handle placement-syncd-agent.service", script)
		}
	}
	if strings.Contains(readRepoFile(t, "packaging/debian/postinst"), `enable "$agent_unit"`) {
		t.Error("postinst enables the agent unit; it ships disabled")
	}

	const path = "../../configs/agent-only.yaml"
	_, err := loadConfig(path, nil)
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"agent", "--config", path, "--once"}, &bytes.Buffer{}, &stderr); code != exitUsage ||
		err == nil || !strings.Contains(stderr.String(), path+":") || !strings.Contains(stderr.String(), "agent.service_token") ||
		!strings.Contains(stderr.String(), "placeholder") {
		t.Errorf("the shipped agent.yaml: exit %d (want %d, not restarted), %s", code, exitUsage, stderr.String())
	}
	raw := readRepoFile(t, "configs/agent-only.yaml")
	filled := filepath.Join(t.TempDir(), "agent.yaml")
	writeFile(t, filled, strings.NewReplacer("token: change-me-too", "token: s3cret-local", "service_token: change-me", "service_token: s3cret-hb").Replace(raw))
	cfg, err := loadConfig(filled, nil)
	if err != nil {
		t.Fatalf("agent.yaml with its placeholders filled in: %v", err)
	}
	if !strings.HasPrefix(cfg.Agent.StateFile, "/var/lib/placement-syncd/") {
		t.Errorf("agent.yaml: agent.state_file %q is outside the unit's StateDirectory", cfg.Agent.StateFile)
	}
	if cfg.Metrics.Listen == "" || config.IsLoopback(cfg.Metrics.Listen) {
		t.Errorf("agent.yaml: metrics.listen %q; Prometheus scrapes agent hosts over the network", cfg.Metrics.Listen)
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
