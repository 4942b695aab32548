package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// version and commit are set at link time:
//
//	go build -ldflags "-X main.version=1.2.3 -X main.commit=$(git rev-parse HEAD)"
//
// They are package variables only because -X can set nothing else; they
// are never written at run time.
var (
	version = ""
	commit  = ""
)

// readBuildInfo prefers the link-time values and falls back to what the
// Go toolchain recorded: the module version for 'go install pkg@vX', and
// the VCS revision when built from a checkout with VCS stamping on.
func readBuildInfo() assemble.Build {
	bi := assemble.Build{
		Version:   version,
		Commit:    commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		if bi.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			bi.Version = info.Main.Version
		}
		if bi.Commit == "" {
			var rev, modified string
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					modified = s.Value
				}
			}
			if rev != "" && modified == "true" {
				rev += "-dirty"
			}
			bi.Commit = rev
		}
	}
	if bi.Version == "" {
		bi.Version = "dev"
	}
	if bi.Commit == "" {
		bi.Commit = "unknown"
	}
	return bi
}

// cmdVersion prints what the binary is, and the Placement release it
// follows with its policy enforcement: the binary's default, or with
// --config what that configuration makes of it (so that an operator can
// check, before an upgrade restarts 'serve', whether the release would
// change under them).
func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	_, common := newConfigFlagSet("version", "placement-syncd version [--config FILE]", stderr,
		configSpec{noDB: true, reportsPolicy: true, usage: "YAML configuration `file` whose api.release and policy enforcement to print (default: the binary's defaults)"})
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	bi := readBuildInfo()
	fmt.Fprintf(stdout, "placement-syncd %s\ncommit: %s\ngo: %s\nplatform: %s\nschema version: %d\nplacement API microversions: %s to %s\n",
		bi.Version, bi.Commit, bi.GoVersion, bi.Platform, dbstore.DefaultSchemaVersion(), microversion.Min, microversion.Max)
	rel := cfg.API.ReleaseValue()
	source := "the binary's default; api.release: " + strings.Join(release.Names(), " or ")
	if config.NamesRelease(common.path) {
		source = "api.release in " + common.path
	}
	scope, newDefaults := cfg.Policy.Enforcement(rel)
	fmt.Fprintf(stdout, "placement release: %s (%s)\npolicy: enforce_scope=%t enforce_new_defaults=%t\n", rel, source, scope, newDefaults)
	return nil
}
