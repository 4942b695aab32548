package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/placement-syncd/placement-syncd/adopt/upstream"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// cmdSpec is one command of the table that the help, the dispatch, the
// man page (help --list) and the tests all read, so that none of them
// can list a command another does not know.
type cmdSpec struct {
	// word selects the command after its group's word: "serve", or
	// "migrate" under "db".
	word string
	// args is what the list of commands shows after the name.
	args    string
	summary string
	// run runs a command without subcommands with the arguments after
	// its name; a group with a run of its own is given the arguments
	// after the group's name and tells its subcommands apart itself.
	run command
	// subs are a group's subcommands.
	subs []cmdSpec
	// aliases also select the command; help does not list them.
	aliases []string
}

// commandTable is every command, in the order help lists them.
func commandTable() []cmdSpec {
	return []cmdSpec{
		{word: "serve", summary: "run the Placement API server", run: cmdServe},
		{word: "agent", summary: "run the drivers and sync this host's hardware into Placement", run: cmdAgent},
		{word: "fpga", summary: "program FPGAs through the local agent", subs: []cmdSpec{
			{word: "program", args: "--device PCI_ADDRESS --image IMAGE [--force]", summary: "program an FPGA through the local agent", run: withWord("program", cmdFPGA)},
			{word: "clear", args: "--device PCI_ADDRESS", summary: "release an FPGA whose programming failed", run: withWord("clear", cmdFPGA)},
		}},
		{word: "sync-aggregates", args: "[--dry-run] [--force] [--verbose]", summary: "mirror Nova host aggregates into Placement once", run: cmdSyncAggregates},
		{word: "audit", args: "[--delete] [--force]", summary: "compare Placement with Nova: orphaned consumers, stale providers, usage above capacity, incomplete consumers", run: cmdAudit},
		{word: "gate", args: "[show | set open|closed|auto]", summary: "show the OWNER_NOVA version gate, or override it", run: cmdGate},
		{word: "jobs", args: "[list | run JOB]", summary: "show the reconciler's jobs and runs, or run one now", run: cmdJobs},
		{word: "demo", summary: "the demo's companion (scripts/run-demo)", run: cmdDemo, subs: []cmdSpec{
			{word: "init", summary: "write the demo's source files"},
			{word: "cycle", summary: "play Ironic and Nova for the demo (scripts/run-demo)"},
		}},
		{word: "db", summary: "our database: schema, and copies from and to OpenStack Placement's", subs: []cmdSpec{
			{word: "migrate", args: "[--adopt]", summary: "apply pending database schema migrations", run: cmdDBMigrate},
			{word: "version", summary: "print the database's schema version and the binary's", run: cmdDBVersion},
			{word: "import", args: "--from URL [--replace]", summary: "copy an OpenStack Placement database (" + upstreamReleases() + ") into ours", run: cmdDBImport},
			{word: "export", args: "--to URL [--release " + strings.Join(release.Names(), "|") + "]", summary: "write ours as an OpenStack Placement database of that release (default: api.release)", run: cmdDBExport},
			{word: "verify", args: "--against URL", summary: "compare our answers with a running Placement's", run: cmdDBVerify},
		}},
		{word: "policy", summary: "the API's policy rules", subs: []cmdSpec{
			{word: "list", args: "[--release " + strings.Join(release.Names(), "|") + "]", summary: "print the effective policy rules and the policy file's findings, which serve refuses to start on", run: func(_ context.Context, args []string, stdout, stderr io.Writer) error {
				return cmdPolicyList(args, stdout, stderr)
			}},
		}},
		{word: "explain", args: "'<query>' [--microversion " + microversion.Max.String() + "]", summary: "ask the running daemon why an allocation candidates query gets its candidates, or none", run: cmdExplain},
		{word: "capacity", args: "[--flavor NAME] [--by host|aggregate|zone] [--json]", summary: "ask the running daemon how many more of each Nova flavor fit, and where", run: cmdCapacity},
		{word: "version", args: "[--config FILE]", summary: "print version, commit, Go version and the Placement release followed (the default, or the file's)", run: cmdVersion, aliases: []string{"--version"}},
		{word: "help", args: "[COMMAND]", summary: "print this list, or a command's usage and flags", run: cmdHelp, aliases: []string{"-h", "-help", "--help"}},
	}
}

// upstreamReleases names the releases whose schema db import reads.
func upstreamReleases() string {
	var names []string
	for _, h := range upstream.Heads() {
		names = append(names, h.Release.String()+"'s")
	}
	return strings.Join(names, " or ") + " schema"
}

// withWord runs run with the subcommand's word in front of its arguments,
// for the commands that tell their subcommands apart themselves.
func withWord(word string, run command) command {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return run(ctx, append([]string{word}, args...), stdout, stderr)
	}
}

// commands are the top-level commands by name, aliases included, as
// dispatch selects them.
func commands() map[string]command {
	out := map[string]command{}
	for _, c := range commandTable() {
		run := c.run
		if run == nil {
			run = c.dispatchGroup
		}
		for _, name := range append([]string{c.word}, c.aliases...) {
			out[name] = run
		}
	}
	return out
}

// commandNames lists every command that runs, as typed: "serve",
// "db migrate", ...; groups ("db") are not in it, their subcommands are.
func commandNames() []string {
	var out []string
	for _, c := range commandTable() {
		if c.subs == nil {
			out = append(out, c.word)
		}
		for _, s := range c.subs {
			out = append(out, c.word+" "+s.word)
		}
	}
	return out
}

// dispatchGroup runs the subcommand args names; -h, -help, --help and
// help print the group's usage.
func (c cmdSpec) dispatchGroup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var words []string
	for _, s := range c.subs {
		words = append(words, s.word)
	}
	list := strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
	if len(words) == 1 {
		list = words[0]
	}
	if len(args) == 0 {
		return usageError{fmt.Errorf("%s: missing subcommand (%s); run 'placement-syncd %s -h'", c.word, list, c.word)}
	}
	if isHelpWord(args[0]) {
		fmt.Fprint(stderr, c.groupUsage())
		return errHelp
	}
	for _, s := range c.subs {
		if s.word == args[0] {
			return s.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageError{fmt.Errorf("%s: unknown subcommand %q (%s)", c.word, args[0], list)}
}

func isHelpWord(s string) bool {
	return s == "-h" || s == "-help" || s == "--help" || s == "help"
}

// groupUsage lists a group's subcommands.
func (c cmdSpec) groupUsage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: placement-syncd %s <subcommand> [flags]\n  %s\n\nsubcommands:\n", c.word, c.summary)
	for _, s := range c.subs {
		writeEntry(&b, c.word+" "+s.word, s.args, s.summary)
	}
	fmt.Fprintf(&b, "\nRun 'placement-syncd %s <subcommand> -h' for a subcommand's flags.\n", c.word)
	return b.String()
}

// usage is the list of commands that help prints, rendered from the
// table.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: placement-syncd <command> [flags]\n\ncommands:\n")
	for _, c := range commandTable() {
		if c.subs == nil {
			writeEntry(&b, c.word, c.args, c.summary)
		}
		for _, s := range c.subs {
			writeEntry(&b, c.word+" "+s.word, s.args, s.summary)
		}
	}
	b.WriteString("\nRun 'placement-syncd <command> -h' for a command's flags.\n")
	return b.String()
}

// The list's layout: a name that fits in nameWidth has its summary on
// the same line, a longer one on the next; summaries wrap at lineWidth.
const (
	nameWidth = 13
	lineWidth = 78
)

// writeEntry writes one command of the list.
func writeEntry(b *strings.Builder, name, args, summary string) {
	head := name
	if args != "" {
		head += " " + args
	}
	b.WriteString("  " + head)
	if len(head) < nameWidth {
		b.WriteString(strings.Repeat(" ", nameWidth-len(head)))
	} else {
		b.WriteString("\n" + strings.Repeat(" ", nameWidth+2))
	}
	col := nameWidth + 2
	for i, w := range strings.Fields(summary) {
		if i > 0 && col+1+len(w) > lineWidth {
			b.WriteString("\n" + strings.Repeat(" ", nameWidth+2))
			col = nameWidth + 2
		} else if i > 0 {
			b.WriteString(" ")
			col++
		}
		b.WriteString(w)
		col += len(w)
	}
	b.WriteString("\n")
}

// cmdHelp prints the list of commands, or with a command's name that
// command's usage and flags, on stdout. help --list (for the man page)
// prints every command that runs, one per line.
func cmdHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		fmt.Fprint(stdout, usage())
		return nil
	case isHelpWord(args[0]) && args[0] != "help":
		fmt.Fprint(stderr, "usage: placement-syncd help [COMMAND]\n  print the list of commands, or a command's usage and flags (on stdout)\n")
		return errHelp
	case len(args) == 1 && args[0] == "--list":
		fmt.Fprintln(stdout, strings.Join(commandNames(), "\n"))
		return nil
	case strings.HasPrefix(args[0], "-") || len(args) > 2:
		return usageError{fmt.Errorf("help: want a command's name, e.g. 'placement-syncd help db migrate', got %q", strings.Join(args, " "))}
	}
	if _, ok := commands()[args[0]]; !ok {
		return usageError{fmt.Errorf("help: unknown command %q; run 'placement-syncd help'", args[0])}
	}
	// The command prints its usage where it prints errors: here stdout.
	err := dispatch(ctx, append(args, "-h"), stdout, stdout)
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
