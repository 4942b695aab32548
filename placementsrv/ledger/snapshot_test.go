package ledger

import (
	"fmt"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// benchState fills a state like ../shared/bench's dataset: n roots with
// three inventories, usage, ~8 traits and a rack aggregate; every 10th
// root has two NUMA children and a NIC.
func benchState(n int) *state {
	st := newState()
	class := func(name string, id int64) *resourceClass {
		c := &resourceClass{newNamed(id, name, false, time.Time{}, time.Time{})}
		st.classes[name] = c
		return c
	}
	vcpu, mem, disk, nic := class("VCPU", 0), class("MEMORY_MB", 1), class("DISK_GB", 2), class("NET_BW_EGR_KILOBIT_PER_SEC", 3)
	traits := make([]*trait, 12)
	for i := range traits {
		traits[i] = &trait{newNamed(int64(i), fmt.Sprintf("T%d", i), false, time.Time{}, time.Time{})}
		st.traits[traits[i].name] = traits[i]
	}
	var id int64
	addInv := func(p *provider, c *resourceClass, total int64) {
		p.inventories[c] = &inventory{class: c, InventoryAmounts: store.InventoryAmounts{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1}}
		p.usage[c] = total / 3
	}
	newP := func(parent *provider) *provider {
		id++
		p := newProvider(id, fmt.Sprintf("00000000-0000-4000-8000-%012d", id), fmt.Sprint(id))
		p.root = p
		if parent != nil {
			p.parent, p.root = parent, parent.root
			parent.children[p] = struct{}{}
		}
		st.providers[p.uuid] = p
		st.providerList = append(st.providerList, p)
		return p
	}
	var agg *aggregate
	for i := 0; i < n; i++ {
		if i%20 == 0 {
			agg = &aggregate{id: int64(i), uuid: fmt.Sprintf("agg-%d", i), members: map[*provider]struct{}{}}
			st.aggregates[agg.uuid] = agg
		}
		r := newP(nil)
		r.aggregates[agg] = struct{}{}
		for k := 0; k < 8; k++ {
			r.traits[traits[(i+k)%len(traits)]] = struct{}{}
		}
		addInv(r, disk, 2000)
		if i%10 == 4 {
			for k := 0; k < 2; k++ {
				c := newP(r)
				addInv(c, vcpu, 16)
				addInv(c, mem, 65536)
			}
			addInv(newP(r), nic, 10000000)
		} else {
			addInv(r, vcpu, 32)
			addInv(r, mem, 131072)
		}
	}
	return st
}

func BenchmarkSnapshotBuild(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		st := benchState(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				buildSnapshot(st, 1)
			}
		})
	}
}
