package flavorreq

import (
	"fmt"
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
// (require) or forbidden (isolate). Values Nova's API refuses
// (nova/virt/hardware.py's constraint getters) make the flavor
// untranslatable: Nova would not boot it.
func (b *builder) pinning(f novaclient.Flavor) error {
	specs := f.ExtraSpecs
	policy, hasPolicy := specs["hw:cpu_policy"]
	if hasPolicy && policy != cpuShared && policy != cpuDedicated && policy != cpuMixed {
		return &Untranslatable{Key: "hw:cpu_policy", Reason: fmt.Sprintf("%q is not shared, dedicated or mixed", policy)}
	}
	pinned := policy == cpuDedicated || policy == cpuMixed
	thread, hasThread := specs["hw:cpu_thread_policy"]
	if hasThread && thread != "prefer" && thread != "isolate" && thread != "require" {
		return &Untranslatable{Key: "hw:cpu_thread_policy", Reason: fmt.Sprintf("%q is not prefer, isolate or require", thread)}
	}
	if hasThread && !pinned {
		return &Untranslatable{Key: "hw:cpu_thread_policy", Reason: "needs hw:cpu_policy dedicated or mixed"}
	}
	emul, hasEmul := specs["hw:emulator_threads_policy"]
	if hasEmul && emul != "share" && emul != "isolate" {
		return &Untranslatable{Key: "hw:emulator_threads_policy", Reason: fmt.Sprintf("%q is not share or isolate", emul)}
	}
	if emul == "isolate" && !pinned {
		return &Untranslatable{Key: "hw:emulator_threads_policy", Reason: "isolate needs hw:cpu_policy dedicated or mixed"}
	}
	if _, ok := specs["hw:cpu_dedicated_mask"]; ok && policy != cpuMixed {
		return &Untranslatable{Key: "hw:cpu_dedicated_mask", Reason: "needs hw:cpu_policy=mixed"}
	}
	if !pinned {
		return nil
	}
	g := b.group("")
	if _, ok := g.resources["VCPU"]; ok {
		return &Untranslatable{Key: "resources:VCPU", Reason: "conflicts with hw:cpu_policy=" + policy}
	}
	pcpus := f.VCPUs
	if policy == cpuMixed {
		dedicated, err := dedicatedCPUs(specs["hw:cpu_dedicated_mask"], f.VCPUs)
		if err != nil {
			return &Untranslatable{Key: "hw:cpu_dedicated_mask", Reason: err.Error()}
		}
		pcpus = dedicated
		g.resources["VCPU"] = f.VCPUs - pcpus
	}
	if emul == "isolate" {
		pcpus++
	}
	g.resources["PCPU"] = pcpus
	switch thread {
	case "require":
		g.required["HW_CPU_HYPERTHREADING"] = true
	case "isolate":
		g.forbidden["HW_CPU_HYPERTHREADING"] = true
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
