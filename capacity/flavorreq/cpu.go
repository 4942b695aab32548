package flavorreq

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/novaclient"
)

// CPU policies of hw:cpu_policy, thread policies of hw:cpu_thread_policy.
const (
	cpuShared    = "shared"
	cpuDedicated = "dedicated"
	cpuMixed     = "mixed"
)

// pinning follows _translate_pinning_policies: dedicated asks PCPU for
// every vCPU instead of VCPU; mixed splits the vCPUs by
// hw:cpu_dedicated_mask; either adds one PCPU when emulator threads are
// isolated; the thread policy becomes HW_CPU_HYPERTHREADING required
// (require) or forbidden (isolate). A flavor Nova's API refuses to boot
// (cpuConstraints) is untranslatable.
func (b *builder) pinning(f novaclient.Flavor) error {
	specs := f.ExtraSpecs
	if err := cpuConstraints(f); err != nil {
		return err
	}
	policy, thread, emul := specs["hw:cpu_policy"], specs["hw:cpu_thread_policy"], specs["hw:emulator_threads_policy"]
	g := b.group("")
	switch thread {
	case "require":
		g.required["HW_CPU_HYPERTHREADING"] = true
	case "isolate":
		g.forbidden["HW_CPU_HYPERTHREADING"] = true
	}
	if policy != cpuDedicated && policy != cpuMixed {
		return nil
	}
	pcpus := f.VCPUs
	if policy == cpuMixed {
		dedicated, err := dedicatedCPUs(specs["hw:cpu_dedicated_mask"], f.VCPUs)
		if err != nil {
			return &Untranslatable{Key: "hw:cpu_dedicated_mask", Kind: NovaRefuses, Reason: err.Error()}
		}
		pcpus = dedicated
		g.resources["VCPU"] = f.VCPUs - pcpus
	}
	if emul == "isolate" {
		pcpus++
	}
	g.resources["PCPU"] = pcpus
	return nil
}

// cpuVals are the values hw:cpu_policy, hw:cpu_thread_policy and
// hw:emulator_threads_policy may take.
var cpuVals = map[string][]string{
	"hw:cpu_policy":              {cpuShared, cpuDedicated, cpuMixed},
	"hw:cpu_thread_policy":       {"prefer", "isolate", "require"},
	"hw:emulator_threads_policy": {"share", "isolate"},
}

// numberedCPU matches the keys nova/virt/hardware.py's
// _get_vcpu_pcpu_resources and _get_hyperthreading_trait read (numbered
// suffixes only, matched from the start).
var numberedCPU = regexp.MustCompile(`^(resources|trait)([1-9][0-9]*)?:(VCPU|PCPU|HW_CPU_HYPERTHREADING)`)

// cpuConstraints refuses what numa_get_constraints (nova/virt/hardware.py)
// refuses when a server of the flavor is created: unknown policy values,
// explicit VCPU/PCPU with hw:cpu_policy or together, a PCPU count other
// than the vCPUs (plus one for isolated emulator threads), the
// hyperthreading trait with a thread policy, a thread policy or isolated
// emulator threads without pinning, and a dedicated mask outside mixed.
func cpuConstraints(f novaclient.Flavor) error {
	specs := f.ExtraSpecs
	for key, vals := range cpuVals {
		if v, ok := specs[key]; ok && !slices.Contains(vals, v) {
			return &Untranslatable{Key: key, Kind: NovaRefuses, Reason: fmt.Sprintf("%q is not one of %s", v, strings.Join(vals, ", "))}
		}
	}
	policy, thread, emul := specs["hw:cpu_policy"], specs["hw:cpu_thread_policy"], specs["hw:emulator_threads_policy"]
	var vcpu, pcpu int64
	ht := ""
	for key, val := range specs {
		m := numberedCPU.FindStringSubmatch(key)
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		switch {
		case m == nil:
		case m[1] == "trait" && m[3] == "HW_CPU_HYPERTHREADING":
			ht = val
		case m[1] == "resources" && m[3] == "VCPU" && err == nil:
			vcpu += n
		case m[1] == "resources" && m[3] == "PCPU" && err == nil:
			pcpu += n
		}
	}
	refuse := func(key, why string) error {
		return &Untranslatable{Key: key, Kind: NovaRefuses, Reason: why}
	}
	switch {
	case policy != "" && (vcpu != 0 || pcpu != 0):
		return refuse("hw:cpu_policy", "resources:VCPU or resources:PCPU with hw:cpu_policy")
	case vcpu != 0 && pcpu != 0:
		return refuse("resources:PCPU", "both VCPU and PCPU")
	case pcpu != 0 && emul == "isolate" && pcpu != f.VCPUs+1:
		return refuse("resources:PCPU", "isolated emulator threads need exactly vcpus + 1 PCPUs")
	case pcpu != 0 && emul != "isolate" && pcpu != f.VCPUs:
		return refuse("resources:PCPU", "PCPUs must equal vcpus")
	case thread != "" && ht != "":
		return refuse("hw:cpu_thread_policy", "with the HW_CPU_HYPERTHREADING trait")
	}
	if pcpu != 0 {
		policy = cpuDedicated
	}
	if ht != "" {
		thread = ht
	}
	_, mask := specs["hw:cpu_dedicated_mask"]
	switch {
	case policy != cpuDedicated && policy != cpuMixed && thread != "":
		return refuse("hw:cpu_thread_policy", "a thread policy needs pinned CPUs")
	case policy != cpuDedicated && policy != cpuMixed && emul == "isolate":
		return refuse("hw:emulator_threads_policy", "isolated emulator threads need pinned CPUs")
	case policy != cpuMixed && mask:
		return refuse("hw:cpu_dedicated_mask", "needs hw:cpu_policy=mixed")
	case policy == cpuMixed && !mask:
		return refuse("hw:cpu_dedicated_mask", "hw:cpu_policy=mixed needs it")
	}
	return nil
}

// dedicatedCPUs counts the vCPUs hw:cpu_dedicated_mask pins, as
// get_dedicated_cpu_constraint: a mask starting with ^ excludes from all
// vCPUs; both the pinned and the shared sets must be non-empty and
// within the flavor's vCPUs.
func dedicatedCPUs(mask string, vcpus int64) (int64, error) {
	if strings.TrimSpace(mask) == "" {
		return 0, fmt.Errorf("hw:cpu_policy=mixed needs a dedicated mask")
	}
	spec := mask
	if strings.HasPrefix(strings.TrimSpace(mask), "^") {
		spec = fmt.Sprintf("0-%d,%s", vcpus-1, mask)
	}
	set, err := parseCPUSpec(spec, vcpus)
	if err != nil {
		return 0, err
	}
	n := int64(len(set))
	for c := range set {
		if c >= vcpus {
			return 0, fmt.Errorf("CPU %d is beyond the flavor's %d vCPUs", c, vcpus)
		}
	}
	if n == 0 || n == vcpus {
		return 0, fmt.Errorf("%q leaves no dedicated or no shared vCPU", mask)
	}
	return n, nil
}

// parseCPUSpec reads Nova's CPU set syntax ("0-3,^2,5"): ranges and
// single CPUs included, ^ entries excluded. Ranges are bounded by limit
// (plus one, to see a CPU beyond it) so a huge range costs nothing.
func parseCPUSpec(spec string, limit int64) (map[int64]bool, error) {
	in, out := map[int64]bool{}, map[int64]bool{}
	for _, rule := range strings.Split(spec, ",") {
		rule = strings.TrimSpace(rule)
		if rule == "" {
			continue
		}
		target := in
		if strings.HasPrefix(rule, "^") {
			target, rule = out, strings.TrimSpace(rule[1:])
		}
		lo, hi, isRange := strings.Cut(rule, "-")
		start, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		if err != nil || start < 0 {
			return nil, fmt.Errorf("invalid CPU range %q", rule)
		}
		end := start
		if isRange {
			if end, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || end < start {
				return nil, fmt.Errorf("invalid CPU range %q", rule)
			}
		}
		for c := start; c <= end && c <= max(limit, start); c++ {
			target[c] = true
		}
	}
	for c := range out {
		delete(in, c)
	}
	return in, nil
}
