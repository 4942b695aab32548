package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/removallimit"
	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/reconciler"
)

// ReconcilerConfig configures the reconciler (configs/reconciler.yaml):
// Nova aggregate mirroring, the OWNER_NOVA version gate and stamping,
// and the pre-filter the API applies while the gate is open.
type ReconcilerConfig struct {
	// Enabled runs the reconciler inside serve.
	Enabled bool `yaml:"enabled"`
	// Listen is the local endpoint (gate, heartbeats, jobs).
	Listen string `yaml:"listen"`
	// Token, when set, is required on the local endpoint.
	Token string `yaml:"token"`
	// StateFile remembers Nova's aggregates and the service records.
	StateFile   string        `yaml:"state_file"`
	RunTimeout  time.Duration `yaml:"run_timeout"`
	Concurrency int           `yaml:"concurrency"`
	// RetryAttempts bounds tries per provider write on 409 or 5xx.
	RetryAttempts int                     `yaml:"retry_attempts"`
	Jobs          map[string]string       `yaml:"jobs"`
	Aggregates    AggregatesConfig        `yaml:"aggregates"`
	Audit         reconciler.AuditSection `yaml:"audit"`
	Placement     ReconcilerPlacement     `yaml:"placement"`
	Nova          NovaConfig              `yaml:"nova"`
	Gate          GateConfig              `yaml:"gate"`
	// OwnerNovaPrefilter is off, on or auto (follow the gate).
	OwnerNovaPrefilter string `yaml:"owner_nova_prefilter"`
	// SchedulerUsers are the users whose candidate requests are filtered.
	SchedulerUsers []string `yaml:"scheduler_users"`
	// Leader elects the replica that runs the jobs on a shared database.
	Leader LeaderConfig `yaml:"leader"`
}

// AggregatesConfig guards aggregate mirroring.
type AggregatesConfig struct {
	// MaxRemovals bounds the associations one run may remove: a count
	// ("50") or a percentage of the mirrored associations ("10%").
	MaxRemovals string `yaml:"max_removals"`
}

// ReconcilerPlacement is the Placement the reconciler writes to.
type ReconcilerPlacement struct {
	// URL, empty: this process's API (api.listen).
	URL   string `yaml:"url"`
	Token string `yaml:"token"`
	// Cloud is a clouds.yaml entry; when set, Keystone is used.
	Cloud string `yaml:"cloud"`
}

// NovaConfig selects where Nova's aggregates and hypervisors come from.
type NovaConfig struct {
	// File holds {"aggregates": [...], "hypervisors": [...]}.
	File string `yaml:"file"`
	// Endpoint and Token reach a compute API without Keystone.
	Endpoint string `yaml:"endpoint"`
	Token    string `yaml:"token"`
	// Cloud is a clouds.yaml entry for Keystone authentication.
	Cloud string `yaml:"cloud"`
	// CloudsFile is the clouds.yaml holding Cloud; empty: the usual
	// places ($OS_CLIENT_CONFIG_FILE, ./clouds.yaml,
	// ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml).
	CloudsFile string `yaml:"clouds_file"`
	// APIDatabase is the nova_api database (read only), whose
	// cell_mappings name every cell the gate reads; Nova's URL form
	// (mysql+pymysql://user:pw@host:3306/nova_api?charset=utf8) or a
	// go-sql-driver/mysql DSN.
	APIDatabase string `yaml:"api_database"`
	// CellDatabases, when set, are where the gate reads nova-compute
	// services and their versions (read only); otherwise the compute API's
	// os-services lists them and heartbeats give the versions. With
	// api_database they replace the mapping's address of the same cell.
	CellDatabases []CellDatabaseConfig `yaml:"cell_databases"`
	// CellDatabasesComplete asserts that cell_databases are every cell
	// Nova has. Without it, cell_databases with neither api_database nor
	// a compute API (endpoint, cloud or a file with services) to check
	// them against keep the gate closed: a cell left out would never be
	// counted.
	CellDatabasesComplete bool `yaml:"cell_databases_complete"`
	// Timeout bounds each compute API listing; above Nova's own cell
	// timeout (60 s), so that a hung cell is Nova's answer, not ours.
	Timeout time.Duration `yaml:"timeout"`
	// CellTimeout bounds the reading of each cell (and API) database.
	CellTimeout time.Duration `yaml:"cell_timeout"`
}

// CellDatabaseConfig is one Nova cell database.
type CellDatabaseConfig struct {
	Name string `yaml:"name"`
	// DSN is Nova's URL form, as in nova.conf and `nova-manage cell_v2
	// list_cells` (mysql+pymysql://nova_ro:secret@db1:3306/nova_cell1?charset=utf8),
	// or a go-sql-driver/mysql DSN (nova_ro:secret@tcp(db1:3306)/nova_cell1).
	DSN string `yaml:"dsn"`
}

// GateConfig configures the OWNER_NOVA version gate.
type GateConfig struct {
	MinVersion int    `yaml:"min_version"`
	Override   string `yaml:"override"`
	// MaxStaleness is how long the last compute list may decide the gate
	// after reading it fails (an unreadable cell); 0 closes it at once.
	MaxStaleness time.Duration `yaml:"max_staleness"`
	// Services replace heartbeat records of the same host and binary.
	Services []ServiceConfig `yaml:"services"`
}

// ServiceConfig is an operator-set service record.
type ServiceConfig struct {
	Host       string `yaml:"host"`
	Binary     string `yaml:"binary"`
	Version    int    `yaml:"version"`
	Deleted    bool   `yaml:"deleted"`
	ForcedDown bool   `yaml:"forced_down"`
}

func defaultReconcilerConfig() ReconcilerConfig {
	return ReconcilerConfig{
		Listen:             "127.0.0.1:8779",
		StateFile:          "reconciler-state.json",
		RunTimeout:         5 * time.Minute,
		Concurrency:        8,
		RetryAttempts:      reconciler.DefaultRetry().Attempts,
		Jobs:               map[string]string{reconciler.JobAggregates: "@every 5m", reconciler.JobOwnerTraits: "@every 10m", reconciler.JobAudit: ""},
		Aggregates:         AggregatesConfig{MaxRemovals: reconciler.DefaultMaxRemovals().String()},
		Audit:              reconciler.DefaultAuditSection(),
		Placement:          ReconcilerPlacement{Token: "admin"},
		Nova:               NovaConfig{Timeout: novaclient.DefaultTimeout, CellTimeout: novaclient.DefaultCellQueryTimeout, CellDatabases: []CellDatabaseConfig{}},
		Gate:               GateConfig{MinVersion: reconciler.MinComputeVersionOwnerTrait, Override: reconciler.GateAuto, Services: []ServiceConfig{}},
		OwnerNovaPrefilter: "auto",
		SchedulerUsers:     []string{"nova"},
		Leader:             defaultLeaderConfig(),
	}
}

// JobSections are the config sections of the reconciler's jobs, by job
// name: a job's section is the key of its name (reconciler.audit for the
// audit), so that a job with options needs no line here but its field.
func (c ReconcilerConfig) JobSections() map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(c)
	for _, name := range reconciler.JobNames() {
		if f, ok := fieldByTag(v.Type(), name); ok {
			out[name] = v.FieldByIndex(f.Index).Interface()
		}
	}
	return out
}

// checkReconciler checks the reconciler section.
func checkReconciler(cfg *Config, p *problems) {
	c := cfg.Reconciler
	if err := listenError(c.Listen); err != nil {
		p.bad("reconciler.listen", "invalid address %q: %v", c.Listen, err)
	}
	if c.StateFile == "" {
		p.bad("reconciler.state_file", "must not be empty")
	}
	if c.RunTimeout < 0 {
		p.bad("reconciler.run_timeout", "must not be negative, got %s", c.RunTimeout)
	}
	if c.Concurrency < 1 {
		p.bad("reconciler.concurrency", "must be at least 1, got %d", c.Concurrency)
	}
	if c.RetryAttempts < 1 {
		p.bad("reconciler.retry_attempts", "must be at least 1, got %d", c.RetryAttempts)
	}
	checkJobs(cfg, p)
	if _, err := removallimit.Parse(c.Aggregates.MaxRemovals); err != nil {
		p.bad("reconciler.aggregates.max_removals", "%v", err)
	}
	checkAudit(cfg, p)
	sources := 0
	for _, s := range []string{c.Nova.File, c.Nova.Endpoint, c.Nova.Cloud} {
		if s != "" {
			sources++
		}
	}
	if sources > 1 {
		p.bad("reconciler.nova", "set only one of file, endpoint and cloud")
	}
	checkNovaDatabases(cfg, p)
	if c.Gate.MaxStaleness < 0 {
		p.bad("reconciler.gate.max_staleness", "must not be negative, got %s", c.Gate.MaxStaleness)
	}
	if c.Gate.MinVersion < 1 {
		p.bad("reconciler.gate.min_version", "must be at least 1, got %d", c.Gate.MinVersion)
	}
	if !slices.Contains([]string{reconciler.GateAuto, reconciler.GateOpen, reconciler.GateClosed}, c.Gate.Override) {
		p.bad("reconciler.gate.override", "invalid value %q (auto, open or closed)", c.Gate.Override)
	}
	for i, s := range c.Gate.Services {
		if s.Host == "" || s.Binary == "" {
			p.bad(fmt.Sprintf("reconciler.gate.services.%d", i), "host and binary are required")
		}
	}
	if !slices.Contains([]string{"off", "on", "auto"}, c.OwnerNovaPrefilter) {
		p.bad("reconciler.owner_nova_prefilter", "invalid value %q (off, on or auto)", c.OwnerNovaPrefilter)
	}
}

// checkJobs checks reconciler.jobs: a cron schedule ("" disables the job)
// for each of the reconciler's jobs, named as the reconciler names them.
func checkJobs(cfg *Config, p *problems) {
	jobs := cfg.Reconciler.Jobs
	known := reconciler.JobNames()
	for _, name := range slices.Sorted(maps.Keys(jobs)) {
		spec := jobs[name]
		switch {
		case !slices.Contains(known, name):
			p.bad("reconciler.jobs."+name, "unknown job %q (known: %s)", name, strings.Join(known, ", "))
		case spec == "":
		default:
			if err := reconciler.ParseSchedule(spec); err != nil {
				p.bad("reconciler.jobs."+name, "invalid cron schedule %q: %v", spec, err)
			}
		}
	}
}

// checkAudit checks reconciler.audit, and that the audit job has a
// source of Nova's instances: a Nova file has none.
func checkAudit(cfg *Config, p *problems) {
	rc := cfg.Reconciler
	c := rc.Audit
	if rc.Jobs[reconciler.JobAudit] != "" && rc.Nova.Endpoint == "" && rc.Nova.Cloud == "" && rc.Nova.File == "" && rc.Nova.APIDatabase == "" && len(rc.Nova.CellDatabases) == 0 {
		p.bad("reconciler.jobs.audit", "the audit needs Nova's compute API (reconciler.nova.endpoint or cloud), a file of its answers (file) or its cell databases (api_database or cell_databases)")
	}
	if c.Grace < 0 {
		p.bad("reconciler.audit.grace", "must not be negative, got %s", c.Grace)
	}
	if _, err := removallimit.Parse(c.MaxRemovals); err != nil {
		p.bad("reconciler.audit.max_removals", "%v", err)
	}
}

// checkNovaDatabases checks the API and cell database addresses (in
// either form) and the timeouts.
func checkNovaDatabases(cfg *Config, p *problems) {
	c := cfg.Reconciler.Nova
	if c.APIDatabase != "" {
		if _, err := novaclient.ParseCellDSN(c.APIDatabase); err != nil {
			p.bad("reconciler.nova.api_database", "%v", err)
		}
	}
	for i, cdb := range c.CellDatabases {
		if cdb.Name == "" || cdb.DSN == "" {
			p.bad(fmt.Sprintf("reconciler.nova.cell_databases.%d", i), "name and dsn are required")
		} else if _, err := novaclient.ParseCellDSN(cdb.DSN); err != nil {
			p.bad(fmt.Sprintf("reconciler.nova.cell_databases.%d.dsn", i),
				"%v (want Nova's URL form, mysql+pymysql://user:pw@host:3306/nova_cell1?charset=utf8, or a go-sql-driver DSN)", err)
		}
	}
	for key, d := range map[string]time.Duration{"reconciler.nova.timeout": c.Timeout, "reconciler.nova.cell_timeout": c.CellTimeout} {
		if d <= 0 {
			p.bad(key, "must be positive, got %s", d)
		}
	}
}
