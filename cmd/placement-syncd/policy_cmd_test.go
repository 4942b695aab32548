package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes a policy file and a config using it into a temp dir
// and returns the config's path; rel is its api.release ("" for none)
// and extra more policy keys.
func writeFiles(t *testing.T, policyFile, rel, extra string) string {
	t.Helper()
	dir := t.TempDir()
	pf := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pf, []byte(policyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	api := "api:\n  listen: \"127.0.0.1:0\"\n"
	if rel != "" {
		api += "  release: \"" + rel + "\"\n"
	}
	body := api + "database:\n  path: \"" + filepath.Join(dir, "p.db") + "\"\npolicy:\n  file: \"" + pf + "\"\n" + extra
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// policyList runs `policy list` with args and returns its output.
func policyList(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append([]string{"policy", "list"}, args...), &out, &errb); code != exitOK {
		t.Fatalf("policy list %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// checkOutput fails for each of want that out lacks, and each of not
// that it has.
func checkOutput(t *testing.T, out string, want, not []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	for _, n := range not {
		if strings.Contains(out, n) {
			t.Errorf("output has %q:\n%s", n, out)
		}
	}
}

// TestPolicyList: api.release chooses the rule set and the enforcement
// defaults; an operator file overrides rules of either.
func TestPolicyList(t *testing.T) {
	t.Run("8.0.0", func(t *testing.T) {
		cfg := writeFiles(t, "\"placement:usages\": \"role:auditor\"\nextra: \"rule:missing\"\n", "8.0.0", "  enforce_new_defaults: true\n")
		checkOutput(t, policyList(t, "--config", cfg), []string{
			"# Effective policy: Placement 8.0.0 defaults, enforce_scope=false enforce_new_defaults=true",
			"/policy.yaml:2: rule \"extra\" refers to undefined rule \"missing\"\n",
			"\"system_reader_api\": \"(role:reader and system_scope:all)\"\n",
			"# default; scope_types: system\n\"placement:resource_providers:list\": \"rule:system_reader_api\"\n",
			"# file; scope_types: system, project\n\"placement:usages\": \"role:auditor\"\n",
			"# file only (not a Placement rule)\n\"extra\": \"rule:missing\"\n",
		}, []string{"admin_or_service_api", "placement:reshaper:reshape\": \"rule:service_api"})
	})
	t.Run("15.0.0 by default", func(t *testing.T) {
		cfg := writeFiles(t, "\"placement:reshaper:reshape\": \"role:admin or role:service\"\n", "", "")
		checkOutput(t, policyList(t, "--config", cfg), []string{
			"# Effective policy: Placement 15.0.0 defaults, enforce_scope=true enforce_new_defaults=true",
			"# default; scope_types: project\n\"admin_or_service_api\": \"(role:admin or role:service)\"\n",
			"# default; scope_types: project\n\"placement:resource_providers:list\": \"rule:admin_or_service_api\"\n",
			"# file; scope_types: project\n\"placement:reshaper:reshape\": \"(role:admin or role:service)\"\n",
			"\"placement:usages\": \"rule:admin_or_project_reader_or_service_api\"\n",
		}, []string{"system_reader_api", "system_admin_api", "# warning"})
	})
	t.Run("no config", func(t *testing.T) {
		out := policyList(t)
		checkOutput(t, out, []string{
			"Placement 15.0.0 defaults, enforce_scope=true enforce_new_defaults=true file=\"\"",
			"\"service_api\": \"role:service\"\n",
		}, []string{"or role:admin)"})
		// Placement's 38 and placement-syncd's explain and capacity rules.
		if n := strings.Count(out, "\n\""); n != 40 || !strings.Contains(out, "# default\n\"placement-syncd:allocation_candidates:explain\": \"role:admin\"\n") ||
			!strings.Contains(out, "# default\n\"placement-syncd:capacity\": \"role:admin\"\n") {
			t.Errorf("%d rules, want 15.0.0's 38 and the explain and capacity rules:\n%s", n, out)
		}
	})
	t.Run("8.0.0 legacy", func(t *testing.T) {
		cfg := writeFiles(t, "", "8.0.0", "")
		out := policyList(t, "--config", cfg)
		checkOutput(t, out, []string{
			"Placement 8.0.0 defaults, enforce_scope=false enforce_new_defaults=false",
			"# default+deprecated\n\"system_admin_api\": \"((role:admin and system_scope:all) or role:admin)\"",
		}, []string{"service_api"})
		if n := strings.Count(out, "\n\""); n != 40 {
			t.Errorf("%d rules, want 8.0.0's 38 and the explain and capacity rules:\n%s", n, out)
		}
	})
}

// TestPolicyListRelease: --release lists another release's rules over
// the same configuration, and the findings of the file under it, as
// serve would refuse them; a release that does not exist is a usage
// error naming the flag.
func TestPolicyListRelease(t *testing.T) {
	cfg := writeFiles(t, "# 8.0.0's\n\"placement:resource_providers:list\": \"rule:system_reader_api\"\n", "8.0.0", "")
	checkOutput(t, policyList(t, "--config", cfg), []string{
		"# Effective policy: Placement 8.0.0 defaults, enforce_scope=false enforce_new_defaults=false",
		"# file; scope_types: system\n\"placement:resource_providers:list\": \"rule:system_reader_api\"\n",
	}, []string{"# warning"})
	checkOutput(t, policyList(t, "--config", cfg, "--release", "15.0.0"), []string{
		"# Effective policy: Placement 15.0.0 defaults, enforce_scope=true enforce_new_defaults=true",
		"/policy.yaml:2: rule \"placement:resource_providers:list\" refers to undefined rule \"system_reader_api\" (a Placement 8.0.0 rule; api.release is 15.0.0)\n",
		"# file; scope_types: project\n\"placement:resource_providers:list\": \"rule:system_reader_api\"\n",
	}, nil)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"policy", "list", "--release", "9.9.9"}, &out, &errb); code != exitUsage ||
		!strings.Contains(errb.String(), `flag --release: unknown Placement release "9.9.9"`) {
		t.Errorf("--release 9.9.9: exit %d: %s", code, errb.String())
	}
}

// TestPolicyListPlacementConf: placement.conf's [oslo_policy] gives the
// file and the enforcement settings, and the YAML still overrides them.
func TestPolicyListPlacementConf(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "policy.yaml"), "\"placement:traits:list\": \"role:reader\"\n")
	conf := filepath.Join(dir, "placement.conf")
	writeFile(t, conf, "[oslo_policy]\npolicy_file = policy.yaml\nenforce_new_defaults = False\n")
	checkOutput(t, policyList(t, "--placement-conf", conf), []string{
		"Placement 15.0.0 defaults, enforce_scope=true enforce_new_defaults=false file=\"" + filepath.Join(dir, "policy.yaml") + "\"",
		"# default+deprecated; scope_types: project\n\"admin_or_service_api\": \"((role:admin or role:service) or role:admin)\"\n",
		"# file; scope_types: project\n\"placement:traits:list\": \"role:reader\"\n",
	}, nil)
	yaml := filepath.Join(dir, "config.yaml")
	writeFile(t, yaml, "api:\n  release: \"8.0.0\"\npolicy:\n  enforce_scope: true\n")
	checkOutput(t, policyList(t, "--placement-conf", conf, "--config", yaml), []string{
		"Placement 8.0.0 defaults, enforce_scope=true enforce_new_defaults=false",
		"# default+deprecated\n\"system_reader_api\": \"((role:reader and system_scope:all) or role:admin)\"\n",
		"# file; scope_types: system\n\"placement:traits:list\": \"role:reader\"\n",
	}, nil)
	bad := filepath.Join(dir, "bad.conf")
	writeFile(t, bad, "[oslo_policy]\nenforce_scope = maybe\n")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"policy", "list", "--placement-conf", bad}, &out, &errb); code != exitUsage ||
		!strings.Contains(errb.String(), "enforce_scope") {
		t.Errorf("bad placement.conf: exit %d: %s", code, errb.String())
	}
}

// TestServeRefusesBadPolicy: a malformed policy file stops start-up with
// a usage exit naming the file and the rule, before anything listens.
func TestServeRefusesBadPolicy(t *testing.T) {
	cfg := writeFiles(t, "\"placement:traits:list\": \"role:admin or\"\n", "", "")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"serve", "--config", cfg}, &out, &errb)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d: %s", code, exitUsage, errb.String())
	}
	if !strings.Contains(errb.String(), `rule "placement:traits:list"`) || !strings.Contains(errb.String(), "policy.yaml") {
		t.Errorf("stderr does not name the file and rule: %s", errb.String())
	}
	if code := run(context.Background(), []string{"policy", "list", "--config", cfg}, &out, &errb); code != exitUsage {
		t.Errorf("policy list exit %d", code)
	}
}
