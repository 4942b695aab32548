package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// usesDatabase are the commands that open our database, the only ones
// whose -h may offer --db.
var usesDatabase = []string{"serve", "db migrate", "db version", "db import", "db export", "db verify"}

// commandHelp runs a command's -h: it must exit 0 with the usage, naming
// the command, on stderr and nothing on stdout. A usage line may name
// several subcommands at once ("demo init|cycle").
func commandHelp(t *testing.T, name string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append(strings.Fields(name), "-h"), &stdout, &stderr)
	words := strings.Fields(name)
	for i, w := range words {
		words[i] = `([^ ]*\|)?` + regexp.QuoteMeta(w) + `(\|[^ ]*)?`
	}
	named := regexp.MustCompile(`^usage: placement-syncd ` + strings.Join(words, " ") + `[ \n]`)
	if code != exitOK || stdout.Len() != 0 || !named.MatchString(stderr.String()) {
		t.Errorf("%s -h: exit %d, stdout %q, stderr %q; want exit 0 and the usage on stderr", name, code, stdout.String(), stderr.String())
	}
	return stderr.String()
}

// flagsOf are the flags a command's -h lists (the flag package's
// PrintDefaults: "  -name ...").
func flagsOf(help string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`).FindAllStringSubmatch(help, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestHelp_EveryCommand: every command of the table, and every group,
// answers -h, -help, --help and help with its usage, exit 0; help
// COMMAND prints the same on stdout; usage() lists every command that
// runs, and no command lists --db unless it opens our database.
func TestHelp_EveryCommand(t *testing.T) {
	list := usage()
	for _, name := range commandNames() {
		help := commandHelp(t, name)
		if !strings.Contains(list, "\n  "+name+" ") && !strings.Contains(list, "\n  "+name+"\n") {
			t.Errorf("usage() does not list %q:\n%s", name, list)
		}
		if got, want := slices.Contains(flagsOf(help), "db"), slices.Contains(usesDatabase, name); got != want {
			t.Errorf("%s -h lists -db: %v, want %v (only commands that open our database take it):\n%s", name, got, want, help)
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"help"}, strings.Fields(name)...), &stdout, &stderr); code != exitOK || stdout.String() != help {
			t.Errorf("help %s: exit %d, stdout %q, stderr %q; want the usage of %s -h on stdout", name, code, stdout.String(), stderr.String(), name)
		}
	}
	for _, c := range commandTable() {
		if c.subs == nil {
			continue
		}
		for _, h := range []string{"-h", "-help", "--help", "help"} {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{c.word, h}, &stdout, &stderr)
			if code != exitOK || stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "usage: placement-syncd "+c.word+" ") {
				t.Errorf("%s %s: exit %d, stdout %q, stderr %q; want exit 0 and the group's usage on stderr", c.word, h, code, stdout.String(), stderr.String())
			}
			for _, s := range c.subs {
				if !regexp.MustCompile(`(?m)^  (` + c.word + ` )?` + s.word + ` `).MatchString(stderr.String()) {
					t.Errorf("%s %s does not list %s:\n%s", c.word, h, s.word, stderr.String())
				}
			}
		}
	}
}

// TestHelp_Names: commands() selects every top-level command by name,
// and commandNames lists exactly the commands usage() shows.
func TestHelp_Names(t *testing.T) {
	names := commandNames()
	want := []string{"serve", "agent", "fpga program", "fpga clear", "sync-aggregates", "audit", "gate", "jobs", "demo init", "demo cycle",
		"db migrate", "db version", "db import", "db export", "db verify", "policy list", "explain", "capacity", "version", "help"}
	if !slices.Equal(names, want) {
		t.Errorf("commandNames() = %q\nwant %q", names, want)
	}
	cmds := commands()
	for _, name := range append(names, "--version", "-h", "--help") {
		if _, ok := cmds[strings.Fields(name)[0]]; !ok {
			t.Errorf("commands() lacks %q", name)
		}
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"help", "--list"}, &out, &bytes.Buffer{}); code != exitOK || out.String() != strings.Join(names, "\n")+"\n" {
		t.Errorf("help --list: exit %d:\n%s", code, out.String())
	}
}

// TestManPage runs packaging/man-page on the built binary: the page
// names every command of the table in a section of its own, with every
// flag its -h lists, and the list of commands.
func TestManPage(t *testing.T) {
	out, err := exec.Command("../../packaging/man-page", syncd.Binary(t), testVersion, "2026-12-06").Output()
	if err != nil {
		t.Fatalf("packaging/man-page: %v", err)
	}
	page := string(out)
	if !strings.Contains(page, `"placement-syncd `+testVersion+`"`) {
		t.Errorf("the page does not carry the version %s", testVersion)
	}
	for _, line := range strings.Split(strings.TrimSuffix(usage(), "\n"), "\n") {
		if line != "" && !strings.Contains(page, "\n"+line+"\n") {
			t.Errorf("the page's list of commands lacks %q", line)
		}
	}
	for _, name := range commandNames() {
		i := strings.Index(page, "\n.SS "+name+"\n")
		if i < 0 {
			t.Errorf("the page has no section for %s", name)
			continue
		}
		section, _, _ := strings.Cut(page[i+1:], "\n.S")
		for _, f := range flagsOf(commandHelp(t, name)) {
			if !strings.Contains(section, "\n  -"+f) {
				t.Errorf("the page's section for %s lacks -%s:\n%s", name, f, section)
			}
		}
	}
}

// TestREADME_Commands: README.md's list of commands, the ```text block
// under its "Commands" heading, is usage() exactly.
func TestREADME_Commands(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	paste := "paste the output of 'placement-syncd help' there:\n```text\n" + usage() + "```"
	got, ok := readmeCommands(string(b))
	if !ok {
		t.Fatalf("README.md has no heading \"Commands\" followed by a ```text block; %s", paste)
	}
	if got != usage() {
		t.Fatalf("README.md's list of commands differs from 'placement-syncd help':\n%s\n%s", lineDiff(got, usage()), paste)
	}
}

// readmeCommands is the content of the first ```text block after the
// heading "Commands" (of any level).
func readmeCommands(readme string) (string, bool) {
	loc := regexp.MustCompile("(?m)^#+ Commands\n").FindStringIndex(readme)
	if loc == nil {
		return "", false
	}
	rest := readme[loc[1]:]
	start := strings.Index(rest, "```text\n")
	if start < 0 {
		return "", false
	}
	body, _, ok := strings.Cut(rest[start+len("```text\n"):], "```")
	return body, ok
}

// lineDiff lists the lines of got and want that differ, by line number.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  README: " + gl + "\n  help:   " + wl + "\n")
		}
	}
	return b.String()
}
