package reconciler

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/heartbeat"
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
	Records []ServiceRecord
	// Required is the minimum version (MinComputeVersionOwnerTrait by
	// default).
	Required int
	// Override is GateAuto (or empty), GateOpen or GateClosed.
	Override string
}

// GateState is the gate's decision and why.
type GateState struct {
	Open     bool   `json:"open"`
	Reason   string `json:"reason"`
	Override string `json:"override"`
	Required int    `json:"required_version"`
	// MinVersion is the lowest counted compute version, 0 with none.
	MinVersion int `json:"min_version"`
	// Computes is the number of counted compute services.
	Computes int `json:"computes"`
	// Behind lists the counted compute hosts below Required.
	Behind []string `json:"behind,omitempty"`
}

// EvaluateGate opens the gate when the minimum version over registered,
// non-deleted, non-forced-down nova-compute records (versions <= 0
// ignored, as Nova does) is at least Required; with no such record it
// stays closed. An operator override wins. It is pure.
func EvaluateGate(in GateInput) GateState {
	st := GateState{Required: in.Required, Override: cmp.Or(in.Override, GateAuto)}
	for _, r := range in.Records {
		if r.Binary != ComputeBinary || r.Deleted || r.ForcedDown || r.Version <= 0 {
			continue
		}
		if st.Computes == 0 || r.Version < st.MinVersion {
			st.MinVersion = r.Version
		}
		st.Computes++
		if r.Version < in.Required {
			st.Behind = append(st.Behind, r.Host)
		}
	}
	slices.Sort(st.Behind)
	switch {
	case st.Override == GateOpen:
		st.Open, st.Reason = true, "opened by the operator (override: open)"
	case st.Override == GateClosed:
		st.Reason = "closed by the operator (override: closed)"
	case st.Computes == 0:
		st.Reason = "no nova-compute service registered"
	case st.MinVersion < in.Required:
		st.Reason = fmt.Sprintf("%d of %d nova-compute services below version %d (minimum %d)", len(st.Behind), st.Computes, in.Required, st.MinVersion)
	default:
		st.Open, st.Reason = true, fmt.Sprintf("all %d nova-compute services at version %d or later", st.Computes, in.Required)
	}
	return st
}

// mergeRecords overlays the operator's configured records on the
// heartbeat records: a configured record replaces the one of the same
// host and binary.
func mergeRecords(heartbeats, configured []ServiceRecord) []ServiceRecord {
	out := slices.Clone(configured)
	for _, r := range heartbeats {
		if !slices.ContainsFunc(configured, func(c ServiceRecord) bool { return c.Host == r.Host && c.Binary == r.Binary }) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, compareRecords)
	return out
}
