package reconciler

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// jobKind is one job the reconciler can run: its name, what it needs
// and what it does. A job is a file holding its constructor
// (aggregatesJob, ownerTraitsJob, auditJob), listed once in jobKinds.
type jobKind struct {
	name string
	// needsNova: without Options.Nova the job is left out, as if it were
	// not scheduled (the aggregates job mirrors what Nova holds).
	needsNova bool
	// open builds the job's own options (Options.JobOptions[name]) from
	// its config section, reconciler.<name>, of the type the job's file
	// declares; nil for a job without options. Its errors are
	// configuration errors.
	open func(section any, env JobEnv) (any, error)
	// check refuses options the job cannot run with; nil accepts any.
	check func(Options) error
	// work builds the job's run from the reconciler's parts.
	work func(*Reconciler) jobFunc
	// reportsUnmapped: the job mirrors Nova hosts, so its runs set the
	// hosts_without_provider gauge.
	reportsUnmapped bool
}

// jobKinds lists every job by name, in the order their start runs go:
// aggregates first, so that stamping starts from the mirrored picture.
func jobKinds() []jobKind {
	return []jobKind{aggregatesJob(), ownerTraitsJob(), auditJob()}
}

// JobEnv is what the command opened for the reconciler that a job's
// options may use: Nova (the compute API or a file of its answers; nil
// when none is set), the settings it came from (the cell databases), and
// the client of the reconciler's Placement.
type JobEnv struct {
	Nova      novaclient.Source
	Settings  novaclient.Settings
	Placement *gophercloud.ServiceClient
}

// OpenJobOptions builds the options of each scheduled job that takes
// some (Options.JobOptions), each from its config section: sections maps
// a job's name to its section, reconciler.<name>. Its errors are
// configuration errors.
func OpenJobOptions(scheduled map[string]string, sections map[string]any, env JobEnv) (map[string]any, error) {
	return openJobOptions(jobKinds(), scheduled, sections, env)
}

func openJobOptions(kinds []jobKind, scheduled map[string]string, sections map[string]any, env JobEnv) (map[string]any, error) {
	out := map[string]any{}
	for _, k := range kinds {
		if k.open == nil || scheduled[k.name] == "" {
			continue
		}
		o, err := k.open(sections[k.name], env)
		if err != nil {
			return nil, err
		}
		out[k.name] = o
	}
	return out, nil
}

// JobNames are the names of the jobs the reconciler can run (the keys of
// Options.Jobs), in the order their start runs go.
func JobNames() []string {
	return jobNames(jobKinds())
}

func jobNames(kinds []jobKind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return names
}

// addJobs schedules the configured jobs, leaving out those whose
// prerequisites are missing. A name no job answers to is an error, never
// another job.
func (r *Reconciler) addJobs(kinds []jobKind, given map[string]string) error {
	schedules := make(map[string]string, len(given))
	for name, spec := range given {
		schedules[canonicalJob(name)] = spec
	}
	for _, k := range kinds {
		spec, ok := schedules[k.name]
		if !ok || (k.needsNova && r.opts.Nova == nil) {
			continue
		}
		if k.check != nil {
			if err := k.check(r.opts); err != nil {
				return err
			}
		}
		if err := r.run.add(k.name, spec, k.work(r), k.reportsUnmapped); err != nil {
			return err
		}
	}
	names := jobNames(kinds)
	for name := range schedules {
		if !slices.Contains(names, name) {
			return fmt.Errorf("%w %q (want %s)", ErrUnknownJob, name, strings.Join(names, " or "))
		}
	}
	return nil
}
