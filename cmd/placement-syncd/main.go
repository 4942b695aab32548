// Command placement-syncd runs the Placement API server and its companions.
//
// Usage and exit codes are documented in README.md and in usage below.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Exit codes, documented in README.md ("Exit codes").
const (
	exitOK      = 0 // success, including a clean shutdown on SIGINT/SIGTERM
	exitFailure = 1 // runtime failure: cannot listen, database I/O, server error
	exitUsage   = 2 // bad command line or configuration file
	exitSchema  = 3 // database schema newer than the binary, or older and not migrated, or not ours
)

const usageText = `usage: placement-syncd <command> [flags]

commands:
  serve        run the Placement API server
  agent        run the drivers and sync this host's hardware into Placement
  fpga program program an FPGA through the local agent
  fpga clear   release an FPGA whose programming failed
  sync-aggregates [--dry-run] [--verbose]
               mirror Nova host aggregates into Placement once
  audit [--delete] [--force]
               compare Placement with Nova: orphaned consumers, stale
               providers, usage above capacity, incomplete consumers
  gate         show the OWNER_NOVA version gate
  jobs [list | run JOB]
               show the reconciler's jobs and runs, or run one now
  demo init | demo cycle
               write the demo's source files, or play Ironic and Nova
               for the demo (scripts/run-demo)
  db migrate   apply pending database schema migrations
  db version   print the database's schema version and the binary's
  db import --from URL [--replace]
               copy an OpenStack Placement 8.0.0 database into ours
  db export --to URL
               write ours as an OpenStack Placement 8.0.0 database
  db verify --against URL
               compare our answers with a running Placement's
  policy list [--release R]
               print the effective policy rules and the policy file's
               findings (serve refuses to start on them)
  explain '<query>' [--microversion MAX]
               ask the running daemon why an allocation candidates
               query gets its candidates, or none
  version      print version, commit, Go version and the Placement
               release followed (the default, or --config's)

Run 'placement-syncd <command> -h' for a command's flags.
`

// usage is usageText with the highest microversion this binary speaks.
func usage() string {
	return strings.Replace(usageText, "MAX", microversion.Max.String(), 1)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program behind main, minus signals and os.Exit, so
// tests can drive it. ctx ending asks a running server to shut down.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdout, stderr)
	code := exitCode(err)
	if err != nil && !errors.Is(err, errHelp) && !errors.Is(err, errReported) {
		// One line per joined error, e.g. several bad config keys.
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(stderr, "placement-syncd: %s\n", line)
		}
	}
	return code
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return usageError{errReported}
	}
	if cmd, ok := commands()[args[0]]; ok {
		return cmd(ctx, args[1:], stdout, stderr)
	}
	return usageError{fmt.Errorf("unknown command %q; run 'placement-syncd help'", args[0])}
}

// command runs one command with the arguments after its name.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// commands are the commands by name, as usage lists them.
func commands() map[string]command {
	return map[string]command{
		"serve":           cmdServe,
		"agent":           cmdAgent,
		"fpga":            cmdFPGA,
		"demo":            cmdDemo,
		"sync-aggregates": cmdSyncAggregates,
		"audit":           cmdAudit,
		"gate":            cmdGate,
		"jobs":            cmdJobs,
		"db":              cmdDB,
		"policy":          cmdPolicy,
		"explain":         cmdExplain,
		"version":         cmdVersion, "--version": cmdVersion,
		"help": cmdHelp, "-h": cmdHelp, "-help": cmdHelp, "--help": cmdHelp,
	}
}

// cmdHelp prints the usage.
func cmdHelp(_ context.Context, _ []string, stdout, _ io.Writer) error {
	fmt.Fprint(stdout, usage())
	return nil
}

// cmdDB runs `placement-syncd db migrate|version`.
func cmdDB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return usageError{errors.New("db: missing subcommand (migrate, version, import, export or verify)")}
	}
	switch args[0] {
	case "migrate":
		return cmdDBMigrate(ctx, args[1:], stdout, stderr)
	case "version":
		return cmdDBVersion(ctx, args[1:], stdout, stderr)
	case "import":
		return cmdDBImport(ctx, args[1:], stdout, stderr)
	case "export":
		return cmdDBExport(ctx, args[1:], stdout, stderr)
	case "verify":
		return cmdDBVerify(ctx, args[1:], stdout, stderr)
	}
	return usageError{fmt.Errorf("db: unknown subcommand %q (migrate, version, import, export or verify)", args[0])}
}

// cmdPolicy runs `placement-syncd policy list`.
func cmdPolicy(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 || args[0] != "list" {
		return usageError{errors.New("policy: expected subcommand list")}
	}
	return cmdPolicyList(args[1:], stdout, stderr)
}

var (
	// errHelp: -h was given; the flag package already printed the usage.
	errHelp = flag.ErrHelp
	// errReported: the message is already on stderr; only the code remains.
	errReported = errors.New("already reported")
)

// usageError marks a bad command line or configuration (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode maps an error to the documented exit code.
func exitCode(err error) int {
	var ue usageError
	var ee exitError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, store.ErrSchemaTooNew), errors.Is(err, store.ErrSchemaTooOld), errors.Is(err, store.ErrForeignDatabase):
		return exitSchema
	case errors.As(err, &ue), errors.As(err, new(config.Error)):
		return exitUsage
	}
	return exitFailure
}

// newFlagSet makes a flag set that reports errors instead of exiting.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, refusing stray positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		// The flag package has printed the error and the usage.
		return usageError{errReported}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}
