package flavorreq

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/novaclient"
	"github.com/placement-syncd/placement-syncd/placementsrv/standard"
)

// specKey splits resources[SUFFIX]:CLASS and trait[SUFFIX]:NAME keys;
// the suffix is Placement 1.33's (nova/scheduler/utils.py XS_KEYPAT).
var specKey = regexp.MustCompile(`^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$`)

// extraSpecs applies group_policy, resources* and trait* keys in key
// order (Nova's dict order does not change the result: each key sets
// its own entry). Values Nova ignores with a warning become notes.
func (b *builder) extraSpecs(specs map[string]string) {
	keys := make([]string, 0, len(specs))
	for k := range specs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		val := specs[key]
		if key == "group_policy" {
			if val != "none" && val != "isolate" {
				b.notes = append(b.notes, fmt.Sprintf("group_policy=%q ignored by Nova (none or isolate)", val))
				continue
			}
			b.policy = val
			continue
		}
		m := specKey.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		if m[1] == "resources" {
			b.resource(key, m[2], m[3], val)
		} else {
			b.trait(key, m[2], m[3], val)
		}
	}
}

// resource follows _add_resource: a standard or CUSTOM_ class and a
// non-negative integer amount, else Nova ignores the key.
func (b *builder) resource(key, suffix, class, val string) {
	if !strings.HasPrefix(class, standard.CustomPrefix) && !slices.Contains(standard.ResourceClasses(), class) {
		b.notes = append(b.notes, fmt.Sprintf("%s ignored by Nova: not a resource class", key))
		return
	}
	// Python's int() takes surrounding blanks and a sign.
	n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
	if err != nil || n < 0 {
		b.notes = append(b.notes, fmt.Sprintf("%s=%q ignored by Nova: not a non-negative integer", key, val))
		return
	}
	b.group(suffix).resources[class] = n
}

// trait follows _add_trait: required or forbidden, else ignored.
func (b *builder) trait(key, suffix, name, val string) {
	g := b.group(suffix)
	switch val {
	case "required":
		g.required[name] = true
	case "forbidden":
		g.forbidden[name] = true
	default:
		b.notes = append(b.notes, fmt.Sprintf("%s=%q ignored by Nova (required or forbidden)", key, val))
	}
}

// unmodelledSpecs are extra specs from which Nova 26.2 adds resources or
// traits by rules (or with the image) this package does not follow: a
// flavor with one is reported rather than counted wrongly.
var unmodelledSpecs = map[string]string{
	"hw:mem_encryption":              "Nova adds a MEM_ENCRYPTION_CONTEXT group, depending on the image",
	"hw:pmem":                        "Nova adds CUSTOM_PMEM_NAMESPACE_* resources",
	"hw:tpm_version":                 "Nova adds a COMPUTE_SECURITY_TPM_* trait",
	"hw:tpm_model":                   "Nova adds a COMPUTE_SECURITY_TPM_* trait",
	"os:secure_boot":                 "Nova adds COMPUTE_SECURITY_UEFI_SECURE_BOOT, depending on the image",
	"hw:pci_numa_affinity_policy":    "Nova adds a COMPUTE_SOCKET_PCI_NUMA_AFFINITY trait",
	"accel:device_profile":           "Cyborg's device profile adds request groups",
	"hw:cpu_realtime_mask":           "the realtime mask's PCPU split",
	"hw:ephemeral_encryption_format": "Nova's ephemeral_encryption_filter adds a format trait",
}

// unmodelled refuses a flavor carrying one of unmodelledSpecs.
func unmodelled(specs map[string]string) error {
	keys := make([]string, 0, len(unmodelledSpecs))
	for k := range unmodelledSpecs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v, ok := specs[k]; ok && v != "" && !strings.EqualFold(v, "false") && !strings.EqualFold(v, "no") {
			return &Untranslatable{Key: k, Kind: NotModelled, Reason: unmodelledSpecs[k]}
		}
	}
	return nil
}

// hostFilterPrefixes are extra specs Nova's host filters check after
// Placement answered: the request is exact, but a count from it alone
// is an upper bound for such a flavor.
var hostFilterPrefixes = []string{"hw:numa_nodes", "pci_passthrough:alias", "aggregate_instance_extra_specs:", "capabilities:"}

func hostFilterNotes(f novaclient.Flavor) []string {
	var notes []string
	for _, p := range hostFilterPrefixes {
		for k := range f.ExtraSpecs {
			if strings.HasPrefix(k, p) {
				notes = append(notes, k+" is checked by Nova's host filters, not Placement")
				break
			}
		}
	}
	if f.Disabled {
		notes = append(notes, "the flavor is disabled: Nova boots no new server of it")
	}
	return notes
}

// Traits the scheduler's pre-filters and placement-syncd's OWNER_NOVA
// pre-filter add.
const (
	traitComputeDisabled     = "COMPUTE_STATUS_DISABLED"
	traitEphemeralEncryption = "COMPUTE_EPHEMERAL_ENCRYPTION"
	traitOwnerNova           = "OWNER_NOVA"
	traitOwnerCyborg         = "OWNER_CYBORG"
)

// preFilters adds what Nova 26.2's request_filter.py adds from a flavor:
// compute_status_filter (every request: the root must not be disabled)
// and ephemeral_encryption_filter (the root must encrypt ephemeral
// disks); its other filters depend on configuration, the image, the
// project or ports. Then the OWNER_NOVA pre-filter when o asks for it:
// OWNER_NOVA on the root unless the request already names an owner
// trait there, and every other service's owner trait forbidden in each
// group that does not require it.
func (b *builder) preFilters(specs map[string]string, o Options) {
	b.rootForbidden[traitComputeDisabled] = true
	if v, ok := specs["hw:ephemeral_encryption"]; ok && truthy(v) {
		b.rootRequired[traitEphemeralEncryption] = true
	}
	if !o.OwnerNova {
		return
	}
	if !b.rootRequired[traitOwnerCyborg] && !b.rootForbidden[traitOwnerCyborg] && !b.rootForbidden[traitOwnerNova] {
		b.rootRequired[traitOwnerNova] = true
	}
	for _, g := range b.groups {
		if !g.required[traitOwnerCyborg] {
			g.forbidden[traitOwnerCyborg] = true
		}
	}
}

// truthy is oslo's strutils.bool_from_string(strict=False) for the
// words Nova's validators accept.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "t", "true", "on", "y", "yes":
		return true
	}
	return false
}

// sendable refuses a request Placement would answer 400: a trait both
// required and forbidden in one group (1.22+), a group with traits but
// no resources, more than one suffixed group without group_policy
// (1.25+), or a name that does not survive the query string.
func sendable(req Request) error {
	suffixed := 0
	for _, g := range req.Groups {
		if g.Suffix != "" {
			suffixed++
		}
		if len(g.Resources) == 0 {
			return &Untranslatable{Key: "resources" + g.Suffix, Kind: PlacementRefuses, Reason: "a group with traits but no resources (Nova sends an empty resources parameter)"}
		}
		for _, t := range g.Required {
			if slices.Contains(g.Forbidden, t) {
				return &Untranslatable{Key: "trait" + g.Suffix + ":" + t, Kind: PlacementRefuses, Reason: "both required and forbidden"}
			}
		}
		for _, name := range slices.Concat(g.Required, g.Forbidden) {
			if !nameChars.MatchString(name) {
				return &Untranslatable{Key: "trait" + g.Suffix + ":" + name, Kind: PlacementRefuses, Reason: "not a trait name Placement accepts"}
			}
		}
		for _, r := range g.Resources {
			if !nameChars.MatchString(r.Class) {
				return &Untranslatable{Key: "resources" + g.Suffix + ":" + r.Class, Kind: PlacementRefuses, Reason: "not a resource class name Placement accepts"}
			}
		}
	}
	if suffixed > 1 && req.GroupPolicy == "" {
		return &Untranslatable{Key: "group_policy", Kind: PlacementRefuses, Reason: "missing with more than one suffixed group"}
	}
	return nil
}

// nameChars are the characters of trait and resource class names.
var nameChars = regexp.MustCompile(`^[A-Z0-9_]{1,255}$`)
