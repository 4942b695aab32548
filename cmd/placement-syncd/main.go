// Command placement-syncd runs the Placement API server and its companions.
//
// Usage and exit codes are documented in README.md; the commands are
// the table of commands.go, from which help and the man page are made.
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
	"github.com/placement-syncd/placement-syncd/internal/cloudsyaml"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// Exit codes, documented in README.md ("Exit codes").
const (
	exitOK      = 0 // success, including a clean shutdown on SIGINT/SIGTERM
	exitFailure = 1 // runtime failure: cannot listen, database I/O, server error
	exitUsage   = 2 // bad command line or configuration file
	exitSchema  = 3 // database schema newer than the binary, or older and not migrated, or not ours
)

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
	case errors.As(err, &ue), errors.As(err, new(config.Error)), errors.As(err, new(*cloudsyaml.Error)):
		// First: a configuration error is 2 whatever a command's own
		// code for the step that found it (audit's 5 for Nova).
		return exitUsage
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, store.ErrSchemaTooNew), errors.Is(err, store.ErrSchemaTooOld), errors.Is(err, store.ErrForeignDatabase):
		return exitSchema
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
