package reconciler

import (
	"errors"
	"fmt"
	"strings"
)

// jobKind is one job the reconciler can run: what it needs and what it
// does. A job is a file holding its constructor (aggregatesJob,
// ownerTraitsJob), listed once in jobKinds.
type jobKind struct {
	name string
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

// addJobs schedules the configured jobs. A name no job answers to is an
// error, never another job.
func (r *Reconciler) addJobs(given map[string]string) error {
	schedules := make(map[string]string, len(given))
	for name, spec := range given {
		schedules[canonicalJob(name)] = spec
	}
	kinds := jobKinds()
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
		spec, ok := schedules[k.name]
		if !ok {
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
	for name := range schedules {
		if r.run.byName[name] == nil {
			return fmt.Errorf("%w %q (want %s)", ErrUnknownJob, name, strings.Join(names, " or "))
		}
	}
	return nil
}

// errNeedsNova refuses the aggregates job without a Nova source.
var errNeedsNova = errors.New("the aggregates job needs a Nova source")
