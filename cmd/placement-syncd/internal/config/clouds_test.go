package config

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLoadConfig_Clouds: every key naming a clouds.yaml entry has it
// read at load, as its client would read it, and an entry its client
// cannot use is an error naming our file, line and key and clouds.yaml's
// file, line and key; a clouds_file without a cloud is refused; a
// disabled driver's entry is not read.
func TestLoadConfig_Clouds(t *testing.T) {
	dir := t.TempDir()
	clouds := filepath.Join(dir, "clouds.yaml")
	writeFile(t, clouds, `clouds:
  good:
    auth:
      auth_url: http://keystone.example.com/v3
      username: u
      password: p
  oidc:
    auth_type: v3oidc
  bare:
    region_name: RegionOne
  standalone:
    auth_type: none
`)
	// The reconciler's Placement has no clouds_file: the usual places.
	t.Setenv("OS_CLIENT_CONFIG_FILE", clouds)
	sections := map[string]string{
		"agent.placement.cloud":      "agent:\n  placement:\n    cloud: %s\n    clouds_file: " + clouds + "\n",
		"agent.ironic.cloud":         "agent:\n  ironic:\n    enabled: true\n    cloud: %s\n    clouds_file: " + clouds + "\n",
		"reconciler.placement.cloud": "reconciler:\n  placement:\n    cloud: %s\n",
		"reconciler.nova.cloud":      "reconciler:\n  nova:\n    cloud: %s\n    clouds_file: " + clouds + "\n",
	}
	for key, section := range sections {
		line := strings.Count(section[:strings.Index(section, "cloud: %s")], "\n") + 1
		for cloud, want := range map[string]string{
			"good":       "",
			"oidc":       clouds + `:8: clouds.oidc.auth_type: "v3oidc" is not supported`,
			"bare":       clouds + `:9: clouds.bare.auth: required with auth_type password`,
			"nowhere":    clouds + `:1: clouds: cloud "nowhere" not found`,
			"standalone": clouds + `:11: clouds.standalone: auth_type none needs the`,
		} {
			t.Run(key+"/"+cloud, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "config.yaml")
				writeFile(t, path, strings.Replace(section, "%s", cloud, 1))
				_, err := loadConfig(path, nil)
				if want == "" {
					if err != nil {
						t.Fatalf("a usable entry: %v", err)
					}
					return
				}
				prefix := path + ":" + strconv.Itoa(line) + ": " + key + ": "
				if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v\nwant %s…%s", err, prefix, want)
				}
			})
		}
	}

	path := filepath.Join(dir, "config.yaml")
	writeFile(t, path, "agent:\n  ironic:\n    enabled: false\n    cloud: nowhere\nreconciler:\n  nova:\n    clouds_file: "+clouds+"\n")
	_, err := loadConfig(path, nil)
	want := path + ":7: reconciler.nova.clouds_file: set without reconciler.nova.cloud, which names the entry to read from it"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s (and nothing about the disabled Ironic driver's cloud)", err, want)
	}
}

// TestLoadConfig_NovaCloudsFile: reconciler.nova.clouds_file is read
// into the config, empty by default (the usual places).
func TestLoadConfig_NovaCloudsFile(t *testing.T) {
	if f := Default().Reconciler.Nova.CloudsFile; f != "" {
		t.Errorf("default reconciler.nova.clouds_file %q, want empty", f)
	}
	dir := t.TempDir()
	clouds := filepath.Join(dir, "nova-clouds.yaml")
	writeFile(t, clouds, "clouds:\n  nova:\n    auth_type: admin_token\n    auth: {token: t, endpoint: \"http://nova.example.com:8774/v2.1\"}\n")
	path := filepath.Join(dir, "config.yaml")
	writeFile(t, path, "reconciler:\n  nova:\n    cloud: nova\n    clouds_file: "+clouds+"\n")
	cfg, err := loadConfig(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Reconciler.Nova.CloudsFile != clouds || cfg.Reconciler.Nova.Cloud != "nova" {
		t.Errorf("reconciler.nova %+v", cfg.Reconciler.Nova)
	}
}
