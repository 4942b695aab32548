package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/internal/atomicfile"
	"github.com/placement-syncd/placement-syncd/placementclient"
)

// reportedSet remembers, per driver, the providers this agent reported,
// so that a vanished one is known to be this agent's to retire, and, in
// the same state file, the agent's cached provider states. With a state
// file it survives restarts: Placement cannot tell which agent
// (conductor group, shard) reported an Ironic node's provider, since the
// provider carries only the node's uuid, traits and inventory, all as
// Nova reports them. Without one it lasts as long as the process.
type reportedSet struct {
	file string
	mu   sync.Mutex
	sets map[string]map[string]bool
	// providers are the agent's cached provider states, as last saved.
	providers map[string]savedProvider
	// saved is what the file holds, so that an unchanged set is not
	// written again.
	saved string
}

type reportedDoc struct {
	Reported map[string][]string `json:"reported"`
	// Providers keeps the cache across restarts, so that a restart costs
	// one list instead of two reads per provider.
	Providers map[string]savedProvider `json:"providers,omitempty"`
}

// savedProvider is one cached provider state in the state file.
type savedProvider struct {
	Generation  int                                  `json:"generation"`
	Inventories map[string]placementclient.Inventory `json:"inventories"`
	Traits      []string                             `json:"traits"`
	// Aggregates is nil when they were not read.
	Aggregates *[]string `json:"aggregates,omitempty"`
	// Owned are the traits the agent set (nil: unknown).
	Owned []string `json:"owned,omitempty"`
}

func loadReported(file string) (*reportedSet, error) {
	rs := &reportedSet{file: file, sets: map[string]map[string]bool{}}
	if file == "" {
		return rs, nil
	}
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return rs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read state file: %w", err)
	}
	rs.saved = string(b)
	var doc reportedDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("read state file %s: %w", file, err)
	}
	for d, us := range doc.Reported {
		rs.sets[d] = map[string]bool{}
		for _, u := range us {
			rs.sets[d][u] = true
		}
	}
	rs.providers = doc.Providers
	return rs, nil
}

func (rs *reportedSet) get(driver string) map[string]bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return maps.Clone(rs.sets[driver])
}

func (rs *reportedSet) remove(driver, uuid string) {
	rs.mu.Lock()
	delete(rs.sets[driver], uuid)
	rs.mu.Unlock()
}

// add records the providers, and those kept by uuid, and writes the
// state file (when the set changed since it was read or written).
func (rs *reportedSet) add(driver string, ps []drivers.Provider, keep []string) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	set := rs.sets[driver]
	if set == nil {
		set = map[string]bool{}
		rs.sets[driver] = set
	}
	for _, p := range ps {
		set[p.UUID] = true
	}
	for _, u := range keep {
		set[u] = true
	}
	return rs.save()
}

// setProviders records the cached provider states and writes the file.
func (rs *reportedSet) setProviders(ps map[string]savedProvider) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.providers = ps
	return rs.save()
}

// save writes the file atomically (guarded by the caller); it is a no-op
// when the file already holds the sets.
func (rs *reportedSet) save() error {
	if rs.file == "" {
		return nil
	}
	doc := reportedDoc{Reported: map[string][]string{}, Providers: rs.providers}
	for d, set := range rs.sets {
		doc.Reported[d] = slices.Sorted(maps.Keys(set))
	}
	// Compact: with the cache in it, the file is about 200 bytes a
	// provider, written after every pass that changed something.
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if string(b) == rs.saved {
		return nil
	}
	if err := atomicfile.Write(rs.file, b); err != nil {
		return fmt.Errorf("write state file: %w", err)
	}
	rs.saved = string(b)
	return nil
}
