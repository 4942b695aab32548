// Package drivers defines what a driver is: something that observes
// hardware on one host and returns the desired provider tree. Drivers never
// write to Placement; the agent reads the actual tree, diffs and writes.
package drivers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Driver observes one kind of hardware.
type Driver interface {
	// Name identifies the driver in logs and metrics ("ironic", "fpga").
	Name() string
	// Observe returns the desired providers. An error means the source
	// could not be read; the agent then writes nothing for this driver.
	Observe(ctx context.Context) (*Tree, error)
	// Close releases what the driver opened.
	Close() error
}

// Retiring is a driver whose providers stand for things that can vanish
// from its source (Ironic nodes). The agent retires a provider it
// reported once the driver no longer observes it: deleted without
// allocations, else reserved in full until they go.
type Retiring interface {
	Driver
	RetiresVanished()
}

// Programmer is a driver whose devices can be programmed (drivers/fpga);
// the agent's program requests need one.
type Programmer interface {
	Driver
	DeviceProvider(device string) (string, error)
	BeginProgramming(device string) (prev string, err error)
	AbortProgramming(device, prev string)
	Program(ctx context.Context, device, image string) (function string, err error)
}

// Owner traits (os-traits 2.8.0): who created a provider.
const (
	OwnerNova   = "OWNER_NOVA"
	OwnerCyborg = "OWNER_CYBORG"
)

// Tree is a driver's desired state: providers, parents before children.
type Tree struct {
	Providers []Provider
	// Keep lists the UUIDs of providers the driver still observes but
	// cannot describe this pass (an Ironic node whose resource_class was
	// cleared: Nova raises NoResourceClass and leaves its provider as it
	// is). A Retiring driver's agent must not retire them, nor write to
	// them.
	Keep []string
}

// Provider is one desired resource provider.
type Provider struct {
	// UUID is stable across restarts (node uuid, hash of host and PCI
	// address); Name is unique in Placement.
	UUID string
	Name string
	// Parent is the parent provider, if any: one of this tree's providers
	// (by UUID) or an existing provider the driver does not own (by UUID,
	// else by Name), such as the host's compute-node provider.
	Parent Ref
	// Owner is the owner trait put on the provider (OWNER_NOVA or
	// OWNER_CYBORG); it is part of the provider's traits.
	Owner string
	// Inventories is the full inventory, by resource class. A class left
	// out is removed from Placement (unless it has allocations).
	Inventories map[string]Inventory
	// Traits are the traits this driver owns on the provider. Traits it
	// does not list and never listed are left alone.
	Traits []string
	// Aggregates, when non-nil, is the provider's whole aggregate set.
	Aggregates []string
	// DeferTo are traits that mark the provider as reported by another
	// service (Nova's compute puts its virt driver's capability traits
	// on every provider it reports). When Placement's provider carries
	// one of them that Traits does not list, the agent leaves the
	// provider to that service: it writes nothing to it.
	DeferTo []string
}

// Ref names a provider by UUID or, failing that, by Name.
type Ref struct {
	UUID string
	Name string
}

// IsZero reports whether r names nothing.
func (r Ref) IsZero() bool { return r.UUID == "" && r.Name == "" }

func (r Ref) String() string {
	if r.UUID != "" {
		return r.UUID
	}
	return "name " + r.Name
}

// Inventory is one resource class's inventory. Zero MinUnit, MaxUnit,
// StepSize and AllocationRatio take Placement's defaults.
type Inventory struct {
	Total           int
	Reserved        int
	MinUnit         int
	MaxUnit         int
	StepSize        int
	AllocationRatio float64
	// Unavailable, when set, is why the whole inventory must be held back
	// (a Reason*). The agent reports it as reserved == total (Placement
	// >= 1.26) or, on older servers, removes the inventory.
	Unavailable string
}

// Reasons for unavailability; a bounded set, used as a metric label.
const (
	ReasonMaintenance   = "maintenance"
	ReasonCleaning      = "cleaning"
	ReasonPower         = "power"
	ReasonNotAvailable  = "not_available" // provision state other than available
	ReasonInUse         = "in_use"        // an instance is on the node
	ReasonProgramming   = "programming"
	ReasonProgramFailed = "program_failed"
)

// Errors a driver's device operations (programming) share, so that the
// agent's local endpoint can answer each with its status.
var (
	// ErrUnknownDevice: the driver has no device at that address (404).
	ErrUnknownDevice = errors.New("unknown device")
	// ErrDeviceBusy: the device is in the middle of another operation (409).
	ErrDeviceBusy = errors.New("device is being programmed")
)

// Reasons lists every reason, for metrics.
var Reasons = []string{ReasonMaintenance, ReasonCleaning, ReasonPower, ReasonNotAvailable, ReasonInUse, ReasonProgramming, ReasonProgramFailed}

var (
	customRE = regexp.MustCompile(`^CUSTOM_[A-Z0-9_]+$`)
	uuidRE   = regexp.MustCompile(`^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$`)
	nonAlnum = regexp.MustCompile(`[^0-9A-Za-z]+`)
)

// NormalizeName is Nova's normalize_rc_name and os-traits' normalize_name:
// each run of characters outside [0-9A-Za-z] becomes one "_", then upper
// case, then the CUSTOM_ prefix ("baremetal.gold-1" -> CUSTOM_BAREMETAL_GOLD_1).
func NormalizeName(s string) string {
	return "CUSTOM_" + strings.ToUpper(nonAlnum.ReplaceAllString(s, "_"))
}

// IsCustom reports whether name is a valid custom class or trait name.
func IsCustom(name string) bool { return len(name) <= 255 && customRE.MatchString(name) }

// Validate checks a tree's shape: uuids, names, unique providers,
// in-tree parents listed before children, sane inventory numbers.
func (t *Tree) Validate() error {
	seen := make(map[string]bool, len(t.Providers))
	names := make(map[string]bool, len(t.Providers))
	all := make(map[string]bool, len(t.Providers))
	for _, p := range t.Providers {
		all[p.UUID] = true
	}
	var errs []error
	for i, p := range t.Providers {
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("provider %d (%s): %s", i, p.Name, fmt.Sprintf(format, args...)))
		}
		switch {
		case !uuidRE.MatchString(p.UUID):
			bad("invalid uuid %q", p.UUID)
		case seen[p.UUID]:
			bad("duplicate uuid %s", p.UUID)
		}
		if p.Name == "" || len(p.Name) > 200 {
			bad("name must be 1 to 200 characters")
		} else if names[p.Name] {
			bad("duplicate name")
		}
		if p.Parent.UUID != "" && !uuidRE.MatchString(p.Parent.UUID) {
			bad("invalid parent uuid %q", p.Parent.UUID)
		}
		if p.Parent.UUID == p.UUID && p.UUID != "" {
			bad("is its own parent")
		} else if all[p.Parent.UUID] && !seen[p.Parent.UUID] {
			bad("parent %s is listed after it", p.Parent.UUID)
		}
		for rc, inv := range p.Inventories {
			if inv.Total < 1 || inv.Reserved < 0 || inv.Reserved > inv.Total || inv.MinUnit < 0 || inv.MaxUnit < 0 || inv.StepSize < 0 || inv.AllocationRatio < 0 {
				bad("inventory %s: invalid numbers %+v", rc, inv)
			}
			if rc == "" {
				bad("empty resource class")
			}
		}
		seen[p.UUID] = true
		names[p.Name] = true
	}
	return errors.Join(errs...)
}
