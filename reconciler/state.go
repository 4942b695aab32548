package reconciler

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/placement-syncd/placement-syncd/internal/atomicfile"
)

// StateFile is the reconciler's memory across restarts, one small JSON
// file: which aggregate uuids are Nova's, which providers are Nova
// compute nodes, and the service records received from heartbeats.
//
// Why a local file and not Placement: Placement has nowhere to keep
// metadata about aggregates, and a marker provider would show up in
// operators' listings. Losing the file is safe: current Nova aggregates
// are always treated as Nova's, so only associations of aggregates
// deleted from Nova while the file was gone would be left behind, never
// an operator's removed. Heartbeats re-register services within one
// interval. Writes are atomic (temporary file, fsync, rename).
//
// A StateFile is safe for concurrent use.
type StateFile struct {
	path string
	mu   sync.Mutex
	st   persistedState
}

type persistedState struct {
	OwnedAggregates  []string `json:"owned_aggregates"`
	ManagedProviders []string `json:"managed_providers"`
	// ProviderHosts maps managed providers to the Nova host they were
	// last seen under, so that a provider whose host Nova still lists but
	// without hypervisors is recognised as unknown, not gone.
	ProviderHosts map[string]string `json:"provider_hosts,omitempty"`
	// LastGood is the size of the last Nova answer the aggregates job
	// applied: an empty answer after a non-empty one is refused.
	LastGood NovaCounts      `json:"last_good"`
	Services []ServiceRecord `json:"services"`
	// GateOverride is the operator's `gate set` (empty: none).
	GateOverride *GateOverrideRecord `json:"gate_override,omitempty"`
}

// NovaCounts is the size of one Nova answer.
type NovaCounts struct {
	Aggregates  int `json:"aggregates"`
	Hypervisors int `json:"hypervisors"`
}

// OpenStateFile loads path, or starts empty when it does not exist. An
// empty path keeps the state in memory only (tests, dry runs).
func OpenStateFile(path string) (*StateFile, error) {
	f := &StateFile{path: path}
	if path == "" {
		return f, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read reconciler state: %w", err)
	}
	if err := json.Unmarshal(data, &f.st); err != nil {
		return nil, fmt.Errorf("decode reconciler state %s: %w", path, err)
	}
	return f, nil
}

// Ownership returns the remembered Nova aggregates and compute nodes.
func (f *StateFile) Ownership() (aggregates, providers []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.st.OwnedAggregates), slices.Clone(f.st.ManagedProviders)
}

// ProviderHosts returns the remembered host of each managed provider.
func (f *StateFile) ProviderHosts() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.st.ProviderHosts)
}

// SetOwnership replaces the remembered aggregates and providers (with
// the hosts of those that have one) and saves the file.
func (f *StateFile) SetOwnership(aggregates, providers []string, hosts map[string]string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	kept := map[string]string{}
	for _, p := range providers {
		if h, ok := hosts[p]; ok {
			kept[p] = h
		}
	}
	if slices.Equal(aggregates, f.st.OwnedAggregates) && slices.Equal(providers, f.st.ManagedProviders) && maps.Equal(kept, f.st.ProviderHosts) {
		return nil
	}
	next := f.st
	next.OwnedAggregates, next.ManagedProviders, next.ProviderHosts = slices.Clone(aggregates), slices.Clone(providers), kept
	return f.saveLocked(next)
}

// LastGood returns the size of the last Nova answer applied.
func (f *StateFile) LastGood() NovaCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st.LastGood
}

// SetLastGood records the size of a Nova answer that was applied.
func (f *StateFile) SetLastGood(c NovaCounts) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.LastGood == c {
		return nil
	}
	next := f.st
	next.LastGood = c
	return f.saveLocked(next)
}

// GateOverride returns the operator's recorded override, nil when none.
func (f *StateFile) GateOverride() *GateOverrideRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.st.GateOverride == nil {
		return nil
	}
	o := *f.st.GateOverride
	return &o
}

// SetGateOverride records the operator's override.
func (f *StateFile) SetGateOverride(o GateOverrideRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.st
	next.GateOverride = &o
	return f.saveLocked(next)
}

// Services returns the stored service records.
func (f *StateFile) Services() []ServiceRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.st.Services)
}

// PutService stores rec, replacing the record of the same host and
// binary. The file is written only when something other than the
// heartbeat time changed, so steady heartbeats cost no disk writes.
func (f *StateFile) PutService(rec ServiceRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	next := f.st
	next.Services = slices.Clone(f.st.Services)
	i := slices.IndexFunc(next.Services, func(r ServiceRecord) bool { return r.Host == rec.Host && r.Binary == rec.Binary })
	if i >= 0 {
		old := next.Services[i]
		next.Services[i] = rec
		if sameExceptTime(old, rec) {
			f.st = next
			return nil
		}
	} else {
		next.Services = append(next.Services, rec)
		slices.SortFunc(next.Services, compareRecords)
	}
	return f.saveLocked(next)
}

// saveLocked writes next and, once it is on disk, makes it current.
func (f *StateFile) saveLocked(next persistedState) error {
	if f.path == "" {
		f.st = next
		return nil
	}
	data, err := json.MarshalIndent(next, "", "  ")
	if err != nil {
		return fmt.Errorf("encode reconciler state: %w", err)
	}
	if err := atomicfile.Write(f.path, data); err != nil {
		return fmt.Errorf("save reconciler state: %w", err)
	}
	f.st = next
	return nil
}
