// Package reconciler keeps Placement in step with Nova: it mirrors Nova
// host aggregates onto the compute-node providers of their hosts, and,
// once every nova-compute service Nova lists runs a version that reports
// OWNER_NOVA (the version gate: the list from os-services or the cell
// databases, versions from the cell databases or authenticated
// heartbeats), stamps that trait on Nova-owned providers that lack it;
// only then does the API's pre-filter apply. Its audit job runs
// reconciler/audit, which compares Placement's allocations with Nova's
// records.
//
// Each piece of work is a job run by a Runner on a cron schedule, once at
// start and on demand; a job never runs twice at once. Jobs are
// level-based: read Nova and Placement, compute a plan with pure
// functions (PlanAggregates, EvaluateGate), then write only the
// differences with generation checks, re-reading and retrying on 409.
//
// The package talks to Placement only through the Placement interface
// and to Nova only through NovaSource and ComputeSource, all declared
// here; package novaclient implements the Nova ones (the compute API, a
// file of its answers, the cell databases), as drivers/ironic implements
// what the agent declares. So it runs unchanged against this project's
// server and OpenStack Placement, and tests hand it their own sources.
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
//
// A job with options adds a third: its config section. Its file declares
// the section's type (yaml keys, defaults) and open, which builds the
// job's options from the section and a JobEnv (Nova, the cell databases'
// settings, Placement's client); the job reads them back from
// Options.JobOptions[name]. The command's config holds the section as
// the field reconciler.<name>, with its checks; ReconcilerConfig.JobSections
// finds it by the job's name and OpenJobOptions opens it, so assembling
// the reconciler names no job (job_audit.go is the example).
package reconciler
