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
// and returns the config's path.
func writeFiles(t *testing.T, policyFile, extra string) string {
	t.Helper()
	dir := t.TempDir()
	pf := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pf, []byte(policyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	body := "api:\n  listen: \"127.0.0.1:0\"\ndatabase:\n  path: \"" + filepath.Join(dir, "p.db") + "\"\npolicy:\n  file: \"" + pf + "\"\n" + extra
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPolicyList(t *testing.T) {
	cfg := writeFiles(t, "\"placement:usages\": \"role:auditor\"\nextra: \"rule:missing\"\n", "  enforce_new_defaults: true\n")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"policy", "list", "--config", cfg}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"enforce_new_defaults=true",
		"# warning: rule \"extra\" refers to undefined rule \"missing\"",
		"\"system_reader_api\": \"(role:reader and system_scope:all)\"\n",
		"# file; scope_types: system, project\n\"placement:usages\": \"role:auditor\"\n",
		"# file only (not a Placement rule)\n\"extra\": \"rule:missing\"\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// Without a config: the legacy defaults.
	out.Reset()
	if code := run(context.Background(), []string{"policy", "list"}, &out, &errb); code != exitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "\"system_admin_api\": \"((role:admin and system_scope:all) or role:admin)\"") {
		t.Errorf("legacy defaults missing:\n%s", out.String())
	}
}

// TestServeRefusesBadPolicy: a malformed policy file stops start-up with
// a usage exit naming the file and the rule, before anything listens.
func TestServeRefusesBadPolicy(t *testing.T) {
	cfg := writeFiles(t, "\"placement:traits:list\": \"role:admin or\"\n", "")
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
