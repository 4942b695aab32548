// Package reconciler keeps Placement in step with Nova: it mirrors Nova
// host aggregates onto the compute-node providers of their hosts, and,
// once every nova-compute service Nova lists runs a version that reports
// OWNER_NOVA (the version gate: the list from os-services or the cell
// databases, versions from the cell databases or authenticated
// heartbeats), stamps that trait on Nova-owned providers that lack it;
// only then does the API's pre-filter apply.
//
// Each piece of work is a job run by a Runner on a cron schedule, once at
// start and on demand; a job never runs twice at once. Jobs are
// level-based: read Nova and Placement, compute a plan with pure
// functions (PlanAggregates, EvaluateGate), then write only the
// differences with generation checks, re-reading and retrying on 409.
//
// The package talks to Placement only through the Placement interface
// and to Nova only through NovaSource, both declared here, so that it
// runs unchanged against this project's server and OpenStack Placement.
//
// # Adding a job
//
// A job is data, a jobKind: its name, its prerequisites (needsNova
// leaves it out without a Nova source; check refuses options it cannot
// run with) and its run. A new job touches two places: its own file,
// job_<name>.go, holding its Job<Name> constant and its jobKind
// constructor, and one line in jobKinds (jobs.go). JobNames then lists
// it, Options.Jobs schedules it by name, the endpoint runs it, and the
// command's reconciler.jobs takes its schedule by that name.
package reconciler
