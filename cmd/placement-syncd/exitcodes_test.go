package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
)

// configCommand is one command line that reads the configuration: a
// command, or a command and its subcommand.
type configCommand struct {
	argv          []string
	placementConf bool // it takes --placement-conf
}

// flagLineRE is a flag in the flag package's list of a command's flags.
func flagLineRE(name string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s+-` + name + `\b`)
}

// configCommands are the commands and subcommands that take --config,
// found from the code: the command table (commandNames, and the words a
// command such as gate or jobs takes, from its synopsis) and each one's
// flags (-h).
func configCommands(t *testing.T) []configCommand {
	t.Helper()
	var lines [][]string
	for _, name := range commandNames() {
		lines = append(lines, strings.Fields(name))
	}
	for _, c := range commandTable() {
		for _, w := range synopsisWords(c.args) {
			lines = append(lines, []string{c.word, w})
		}
	}
	var out []configCommand
	for _, argv := range lines {
		var stdout, stderr bytes.Buffer
		run(t.Context(), append(slices.Clone(argv), "-h"), &stdout, &stderr)
		if flagLineRE("config").MatchString(stderr.String()) {
			out = append(out, configCommand{argv: argv, placementConf: flagLineRE("placement-conf").MatchString(stderr.String())})
		}
	}
	return out
}

// commandArgs are the arguments a command needs besides the
// configuration flags to reach its configuration; dir is the test's
// directory and api the API listener's address.
func commandArgs(argv []string, dir, api string) []string {
	switch strings.Join(argv, " ") {
	case "agent":
		return []string{"--once"}
	case "fpga program":
		return []string{"--device", "0000:5e:00.0", "--image", "bitstream"}
	case "fpga clear":
		return []string{"--device", "0000:5e:00.0"}
	case "gate set":
		return []string{"open"}
	case "jobs run":
		return []string{"aggregates"}
	case "explain":
		return []string{"resources=VCPU:1"}
	case "db import":
		return []string{"--from", "sqlite:///" + filepath.Join(dir, "upstream.sqlite")}
	case "db export":
		return []string{"--to", "sqlite:///" + filepath.Join(dir, "export.sqlite")}
	case "db verify":
		return []string{"--against", "http://" + api}
	}
	return nil
}

// listeners are where every service the configuration names listens,
// counting the connections made to them.
type listeners struct {
	api, reconciler, agent string
	accepted               atomic.Int64
}

func newListeners(t *testing.T) *listeners {
	t.Helper()
	l := &listeners{}
	for _, addr := range []*string{&l.api, &l.reconciler, &l.agent} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		*addr = ln.Addr().String()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				l.accepted.Add(1)
				c.Close()
			}
		}()
	}
	return l
}

// setup is the configuration of one case: the YAML's variable parts,
// the files beside it, and what stderr must name.
type setup struct {
	nova, policy, connection, extra string
	files                           map[string]string // name in the directory → content
	placementConf                   bool              // pass --placement-conf placement.conf
	// want are the file (config.yaml or one of files) and line (the
	// first holding the text, none for "") stderr must name; also, more
	// text it must hold.
	want []mark
	also []string
}

// mark is a place an error must name: file, and the line of text in it.
type mark struct{ file, text string }

// names is mark as an error names it: path:line: (path alone without a
// line).
func (m mark) names(dir string, content map[string]string) string {
	path := filepath.Join(dir, m.file)
	if m.text == "" {
		return path
	}
	for i, line := range strings.Split(content[m.file], "\n") {
		if strings.Contains(line, m.text) {
			return path + ":" + strconv.Itoa(i+1) + ":"
		}
	}
	panic(m.file + " has no line holding " + m.text)
}

// yaml is a configuration that is valid but for what s sets, every
// address in it one of ls's, every path in dir.
func (s setup) yaml(dir string, ls *listeners) string {
	db := "  path: " + filepath.Join(dir, "placement.db") + "\n"
	if s.connection != "" {
		db = "  connection: " + strconv.Quote(s.connection) + "\n"
	}
	nova, policy := "{}", ""
	if s.nova != "" {
		nova = strings.ReplaceAll(s.nova, "CLOUDS", filepath.Join(dir, "clouds.yaml"))
	}
	if s.policy != "" {
		policy = filepath.Join(dir, s.policy)
	}
	var b strings.Builder
	b.WriteString("api:\n  listen: " + strconv.Quote(ls.api) + "\n")
	b.WriteString("database:\n" + db)
	b.WriteString("policy:\n  file: " + strconv.Quote(policy) + "\n")
	b.WriteString("reconciler:\n  listen: " + strconv.Quote(ls.reconciler) + "\n  state_file: " + filepath.Join(dir, "reconciler-state.json") + "\n")
	b.WriteString("  placement: {url: \"http://" + ls.api + "\"}\n")
	b.WriteString("  nova: " + nova + "\n")
	b.WriteString("agent:\n  placement: {endpoint: \"http://" + ls.api + "\"}\n  local: {listen: " + strconv.Quote(ls.agent) + ", token: local-token}\n")
	b.WriteString("  static: {enabled: true, file: " + filepath.Join(dir, "static.yaml") + "}\n")
	b.WriteString(s.extra)
	return b.String()
}

// badConfigs are the configuration errors every command must refuse.
func badConfigs() map[string]setup {
	clouds := func(cloud string) string { return "{cloud: " + cloud + ", clouds_file: CLOUDS}" }
	nova := mark{"config.yaml", "  nova: "}
	return map[string]setup{
		"unknown YAML key": {extra: "log:\n  levl: debug\n", want: []mark{{"config.yaml", "levl"}}},
		"bad value":        {extra: "log:\n  level: loud\n", want: []mark{{"config.yaml", "loud"}}},
		"bad placement.conf": {placementConf: true, files: map[string]string{
			"placement.conf": "[DEFAULT]\ndebug = maybe\n"},
			want: []mark{{"placement.conf", "maybe"}}},
		"clouds.yaml auth_type v3oidc": {nova: clouds("oidc"), files: map[string]string{
			"clouds.yaml": "clouds:\n  oidc:\n    auth_type: v3oidc\n    auth: {auth_url: \"http://LISTENER/v3\"}\n"},
			want: []mark{nova, {"clouds.yaml", "v3oidc"}}},
		"clouds.yaml entry without auth": {nova: clouds("bare"), files: map[string]string{
			"clouds.yaml": "clouds:\n  bare:\n    region_name: RegionOne\n"},
			want: []mark{nova, {"clouds.yaml", "bare:"}}},
		"unknown cloud": {nova: clouds("nowhere"), files: map[string]string{
			"clouds.yaml": "clouds:\n  other:\n    auth_type: none\n"},
			want: []mark{nova, {"clouds.yaml", "clouds:"}}},
		"bad secure.yaml": {nova: clouds("nova"), files: map[string]string{
			"clouds.yaml": "clouds:\n  nova:\n    auth_type: admin_token\n    auth: {token: t, endpoint: \"http://LISTENER/v2.1\"}\n",
			"secure.yaml": "clouds: [\n"},
			want: []mark{nova, {"secure.yaml", "clouds: ["}}},
		"bad policy file": {policy: "policy.yaml", files: map[string]string{
			"policy.yaml": "\"placement:resource_providers:list\": \"role:admin and (\"\n"},
			want: []mark{{"policy.yaml", ""}}, also: []string{`rule "placement:resource_providers:list": line 1: policy rule syntax error`}},
		"malformed database URL":      {connection: "mysql+pymysql://placement:secret@db:port/placement", want: []mark{{"config.yaml", "connection:"}}},
		"malformed cell database DSN": {nova: "{api_database: \"nova_ro@tcp(db1/nova_api\"}", want: []mark{nova}},
	}
}

// treeOf lists every path under dir.
func treeOf(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExitCodes_ConfigErrors: every command and subcommand that reads
// the configuration refuses each kind of configuration error the same
// way: exit 2, an error naming the file (and line, where there is one),
// nothing created and no connection made. The codes are the README's.
func TestExitCodes_ConfigErrors(t *testing.T) {
	table := readmeExitCodes(t, "../../README.md")
	if meaning := strings.ToLower(table[exitUsage]); !strings.Contains(meaning, "usage") || !strings.Contains(meaning, "configuration") {
		t.Errorf("README's exit code %d: %q, want a usage or configuration error", exitUsage, table[exitUsage])
	}
	cmds := configCommands(t)
	for _, want := range [][]string{{"serve"}, {"agent"}, {"audit"}, {"gate", "set"}, {"db", "migrate"}, {"policy", "list"}} {
		if !slices.ContainsFunc(cmds, func(c configCommand) bool { return slices.Equal(c.argv, want) }) {
			t.Fatalf("%q is not among the commands found to read the configuration: %v", want, cmds)
		}
	}
	ls := newListeners(t)
	observed := map[int][]string{}
	cases := badConfigs()
	for _, cmd := range cmds {
		for _, name := range slices.Sorted(maps.Keys(cases)) {
			bc := cases[name]
			// placement.conf is read only by a command that takes it.
			if bc.placementConf && !cmd.placementConf {
				continue
			}
			line := strings.Join(cmd.argv, " ")
			t.Run(line+"/"+name, func(t *testing.T) {
				code, stderr := runBadConfig(t, cmd.argv, bc, ls)
				observed[code] = append(observed[code], line+"/"+name)
				if code != exitUsage {
					t.Errorf("exit %d, want %d\n%s", code, exitUsage, stderr)
				}
			})
		}
	}
	if n := ls.accepted.Load(); n > 0 {
		t.Errorf("%d connections to the services the configuration names", n)
	}
	for code, runs := range observed {
		if _, ok := table[code]; !ok {
			t.Errorf("exit code %d (%s) is not in README's table", code, strings.Join(runs, ", "))
		}
	}
}

// runBadConfig runs argv over bc's configuration in a directory of its
// own (the working directory too, where relative defaults land) and
// checks what it names and that it created nothing.
func runBadConfig(t *testing.T, argv []string, bc setup, ls *listeners) (int, string) {
	dir := t.TempDir()
	t.Chdir(dir)
	content := map[string]string{"config.yaml": bc.yaml(dir, ls)}
	for name, body := range bc.files {
		content[name] = strings.ReplaceAll(body, "LISTENER", ls.api)
	}
	cfg := filepath.Join(dir, "config.yaml")
	for name, body := range content {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := append(slices.Clone(argv), commandArgs(argv, dir, ls.api)...)
	args = append(args, "--config", cfg)
	if bc.placementConf {
		args = append(args, "--placement-conf", filepath.Join(dir, "placement.conf"))
	}
	before := treeOf(t, dir)
	// A command that took the configuration would stop here at the
	// latest (serve, the agent): what it created is then still seen.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, &stdout, &stderr)
	for _, m := range bc.want {
		if want := m.names(dir, content); !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not name %s:\n%s", want, stderr.String())
		}
	}
	for _, want := range bc.also {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %s:\n%s", want, stderr.String())
		}
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Errorf("created %v", slices.DeleteFunc(after, func(p string) bool { return slices.Contains(before, p) }))
	}
	return code, stderr.String()
}

// readmeExitCodes is README's table of exit codes: the first
// "| code | meaning |" table after a heading "Exit codes".
func readmeExitCodes(t *testing.T, path string) map[int]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	heading := regexp.MustCompile(`(?i)^#{1,6}\s+exit codes\s*$`)
	cells := func(line string) []string {
		parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	table := map[int]string{}
	state := 0 // 0: before the heading, 1: before the table, 2: in it
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case state == 0 && heading.MatchString(line):
			state = 1
		case state == 1 && strings.HasPrefix(strings.TrimSpace(line), "|"):
			if h := cells(line); len(h) != 2 || !strings.EqualFold(h[0], "code") || !strings.EqualFold(h[1], "meaning") {
				t.Fatalf("%s: the table after \"Exit codes\" has the header %q, want | code | meaning |", path, line)
			}
			state = 2
		case state == 2 && strings.HasPrefix(strings.TrimSpace(line), "|"):
			c := cells(line)
			if strings.Trim(c[0], "-: ") == "" {
				continue // the separator row
			}
			code, err := strconv.Atoi(strings.Trim(c[0], "`"))
			if err != nil || len(c) != 2 {
				t.Fatalf("%s: exit code row %q", path, line)
			}
			table[code] = c[1]
		case state == 2:
			if len(table) == 0 {
				t.Fatalf("%s: the exit code table is empty", path)
			}
			return table
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(table) == 0 {
		t.Fatalf("%s: no | code | meaning | table after a heading \"Exit codes\"", path)
	}
	return table
}

// TestReadmeExitCodes_Parse: the table reader finds the table under any
// heading level, ignores other tables, and refuses a missing one.
func TestReadmeExitCodes_Parse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	body := "# x\n\n| code | audit |\n|---|---|\n| 9 | no |\n\n#### Exit codes\n\n| code | meaning |\n|---|---|\n| 0 | ok |\n| `2` | usage or configuration error |\n\ntext\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	got := readmeExitCodes(t, path)
	want := map[int]string{0: "ok", 2: "usage or configuration error"}
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) || got[2] != want[2] {
		t.Errorf("table %v, want %v", got, want)
	}
}

// TestExitCode_ConfigFirst: a configuration error is 2 even when a
// command wrapped it in its own code for the step that found it (audit's
// Nova open), and a command's code stands for anything else.
func TestExitCode_ConfigFirst(t *testing.T) {
	entry := &cloudsyaml.Error{Err: errors.New("clouds.yaml:3: clouds.x.auth_type: \"v3oidc\" is not supported")}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{exitError{exitAuditNovaPartial, fmt.Errorf("nova: %w", entry)}, exitUsage},
		{exitError{exitAuditNovaPartial, config.Error{Err: errors.New("audit: no source")}}, exitUsage},
		{fmt.Errorf("placementclient: %w", entry), exitUsage},
		{exitError{exitAuditNovaPartial, errors.New("connection refused")}, exitAuditNovaPartial},
		{errors.New("connection refused"), exitFailure},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// synopsisWords are the words a command's synopsis offers as
// alternatives, "[show | set open|closed|auto]" giving show and set;
// a synopsis of flags ("[--dry-run]") offers none.
func synopsisWords(args string) []string {
	if !strings.HasPrefix(args, "[") || strings.HasPrefix(args, "[-") {
		return nil
	}
	var out []string
	for _, alt := range strings.Split(strings.Trim(args, "[]"), " | ") {
		if f := strings.Fields(alt); len(f) > 0 && !strings.HasPrefix(f[0], "-") {
			out = append(out, f[0])
		}
	}
	return out
}
