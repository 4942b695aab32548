package reconciler

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
	"github.com/placement-syncd/placement-syncd/novaclient"
)

// MinComputeVersionOwnerTrait is the nova-compute service version that
// reports OWNER_NOVA on its providers. Until every compute runs at least
// this version, requiring OWNER_NOVA would hide the older computes from
// scheduling.
const MinComputeVersionOwnerTrait = heartbeat.OwnerTraitVersion

// ComputeBinary is the service binary the gate counts.
const ComputeBinary = heartbeat.ComputeBinary

// ServiceRecord is one service as reported by its agent's heartbeat (or
// set by the operator in the configuration).
type ServiceRecord = heartbeat.Record

// sameExceptTime reports whether two records differ at most in their
// heartbeat time.
func sameExceptTime(a, b ServiceRecord) bool {
	a.UpdatedAt, b.UpdatedAt = time.Time{}, time.Time{}
	return a == b
}

func compareRecords(a, b ServiceRecord) int {
	return cmp.Or(cmp.Compare(a.Host, b.Host), cmp.Compare(a.Binary, b.Binary))
}

// Gate overrides.
const (
	GateAuto   = "auto"   // follow the service versions
	GateOpen   = "open"   // operator says every compute is new enough
	GateClosed = "closed" // operator keeps stamping and the pre-filter off
)

// GateOverrideRecord is an override set with `placement-syncd gate set`,
// kept in the state file so that it survives restarts and is shown.
type GateOverrideRecord struct {
	Override string    `json:"override"`
	SetAt    time.Time `json:"set_at"`
}

// GateInput is what EvaluateGate decides from.
type GateInput struct {
	// Computes is Nova's list of nova-compute services; Listed is false
	// while it has never been read.
	Computes []novaclient.ComputeService
	Listed   bool
	// ListError is the last failure to read the list ("" if none).
	ListError string
	// ListFailed: the last read failed and the last list is too old to
	// use (reconciler.gate.max_staleness), so the gate closes.
	ListFailed bool
	// CellsUnchecked says why the configured cell databases cannot be
	// known to be all of Nova's cells ("" when they can): the gate stays
	// closed, whatever they hold.
	CellsUnchecked string
	// Records give versions to listed computes whose source has none:
	// authenticated heartbeats and the operator's configured records.
	Records []ServiceRecord
	// Required is the minimum version (MinComputeVersionOwnerTrait by
	// default).
	Required int
	// Override is GateAuto (or empty), GateOpen or GateClosed.
	Override string
}

// SetList records one read of Nova's compute list, as the reconciler
// records it: the list, or the failure that closes the gate.
func (in *GateInput) SetList(list []novaclient.ComputeService, err error) {
	if err != nil {
		in.ListError, in.ListFailed, in.CellsUnchecked = err.Error(), true, uncheckedReason(err)
		return
	}
	in.Computes, in.Listed = list, true
}

// uncheckedReason is why the configured cells may not be all of Nova's
// when err says so (novaclient.UncheckedCellsError), else "".
func uncheckedReason(err error) string {
	var unchecked *novaclient.UncheckedCellsError
	if errors.As(err, &unchecked) {
		return unchecked.Error()
	}
	return ""
}

// GateState is the gate's decision and why.
type GateState struct {
	Open     bool   `json:"open"`
	Reason   string `json:"reason"`
	Override string `json:"override"`
	// OverrideSetAt is when `gate set` recorded the override (zero when
	// it comes from the configuration).
	OverrideSetAt time.Time `json:"override_set_at,omitzero"`
	Required      int       `json:"required_version"`
	// MinVersion is the lowest known compute version, 0 with none.
	MinVersion int `json:"min_version"`
	// Computes is the number of nova-compute services Nova lists.
	Computes int `json:"computes"`
	// Behind lists the computes below Required; Unknown those with no
	// known version (each keeps the gate closed).
	Behind  []string `json:"behind,omitempty"`
	Unknown []string `json:"unknown,omitempty"`
	// CellDown lists the computes Nova listed as UNKNOWN (their cell did
	// not answer Nova) whose version no cell database gave.
	CellDown []string `json:"cell_down,omitempty"`
	// NoCell lists the computes Nova lists that no configured cell
	// database holds (reconciler.nova.cell_databases misses a cell).
	NoCell []string `json:"no_cell,omitempty"`
	// ListError is the last failure to read Nova's compute list.
	ListError string `json:"list_error,omitempty"`
	// PrefilterOn: the gate is open and the nova-owned providers carry
	// OWNER_NOVA, so the API's pre-filter (auto) applies.
	PrefilterOn bool `json:"prefilter_on"`
	// OpenedAt is when the gate last opened, PrefilterAt when the
	// pre-filter followed (after stamping): the window between them is
	// the time Nova's requests went unfiltered, never emptied.
	OpenedAt    time.Time `json:"opened_at,omitzero"`
	PrefilterAt time.Time `json:"prefilter_at,omitzero"`
}

// EvaluateGate opens the gate when Nova's compute list has been read,
// is not empty, and every compute on it has a known version of at least
// Required: its cell database's, else a trusted record's (an
// authenticated heartbeat or the operator's configuration). A compute
// without a known version keeps it closed. An operator override wins.
// It is pure.
func EvaluateGate(in GateInput) GateState {
	st := GateState{Required: in.Required, Override: cmp.Or(in.Override, GateAuto), ListError: in.ListError}
	for _, c := range in.Computes {
		v, excluded := knownVersion(c, in.Records)
		switch {
		case excluded:
			continue
		case v <= 0 && (c.Down || c.NoCell):
			st.Unknown = append(st.Unknown, c.Host)
			if c.Down {
				st.CellDown = append(st.CellDown, c.Host)
			}
			if c.NoCell {
				st.NoCell = append(st.NoCell, c.Host)
			}
		case v <= 0:
			st.Unknown = append(st.Unknown, c.Host)
		case v < in.Required:
			st.Behind = append(st.Behind, c.Host)
		}
		if v > 0 && (st.MinVersion == 0 || v < st.MinVersion) {
			st.MinVersion = v
		}
		st.Computes++
	}
	slices.Sort(st.Behind)
	slices.Sort(st.Unknown)
	slices.Sort(st.CellDown)
	slices.Sort(st.NoCell)
	switch {
	case st.Override == GateOpen:
		st.Open, st.Reason = true, "opened by the operator (override: open)"
	case st.Override == GateClosed:
		st.Reason = "closed by the operator (override: closed)"
	case in.CellsUnchecked != "":
		st.Reason = "a cell of Nova's may be missing from the compute list: " + in.CellsUnchecked
	case in.ListFailed:
		st.Reason = "Nova's list of nova-compute services could not be read" + listErr(in.ListError)
	case !in.Listed:
		st.Reason = "Nova's list of nova-compute services not read yet" + listErr(in.ListError)
	case st.Computes == 0:
		st.Reason = "Nova lists no nova-compute service" + listErr(in.ListError)
	case len(st.NoCell) > 0:
		st.Reason = fmt.Sprintf("%d of %d nova-compute services are in no configured cell database (reconciler.nova.cell_databases misses a cell): %s",
			len(st.NoCell), st.Computes, strings.Join(st.NoCell, ", "))
	case len(st.CellDown) > 0:
		st.Reason = fmt.Sprintf("%d of %d nova-compute services have no known version, %d of them in a cell Nova cannot read (status UNKNOWN)",
			len(st.Unknown), st.Computes, len(st.CellDown))
	case len(st.Unknown) > 0:
		st.Reason = fmt.Sprintf("%d of %d nova-compute services have no known version", len(st.Unknown), st.Computes)
	case len(st.Behind) > 0:
		st.Reason = fmt.Sprintf("%d of %d nova-compute services below version %d (minimum %d)", len(st.Behind), st.Computes, in.Required, st.MinVersion)
	default:
		st.Open, st.Reason = true, fmt.Sprintf("all %d nova-compute services at version %d or later", st.Computes, in.Required)
		if in.ListError != "" {
			st.Reason += " in the last list read; reading it again failed (within reconciler.gate.max_staleness): " + in.ListError
		}
	}
	return st
}

func listErr(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

// knownVersion is a listed compute's version: its own when the source
// has it, else that of a trusted nova-compute record of the same host.
// A trusted record saying the service is deleted or forced down takes
// it off the count.
func knownVersion(c novaclient.ComputeService, records []ServiceRecord) (version int, excluded bool) {
	if c.Version > 0 {
		return c.Version, false
	}
	if c.Down || c.NoCell {
		// Nova cannot read its cell, or ours misses it: whatever a record says, Nova's own
		// minimum (require_all) fails, so the gate must not open on it.
		return 0, false
	}
	for _, r := range records {
		if r.Host != c.Host || r.Binary != ComputeBinary || !r.Authenticated {
			continue
		}
		if r.Deleted || r.ForcedDown {
			return 0, true
		}
		return r.Version, false
	}
	return 0, false
}

// mergeRecords overlays the operator's configured records, trusted, on
// the heartbeat records: a configured record replaces the one of the
// same host and binary, but keeps that heartbeat's time, when the host
// last checked in (a configured record alone has none).
func mergeRecords(heartbeats, configured []ServiceRecord) []ServiceRecord {
	out := slices.Clone(configured)
	for i := range out {
		out[i].Authenticated = true
	}
	for _, r := range heartbeats {
		if i := slices.IndexFunc(configured, func(c ServiceRecord) bool { return c.Host == r.Host && c.Binary == r.Binary }); i >= 0 {
			out[i].UpdatedAt = r.UpdatedAt
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, compareRecords)
	return out
}
