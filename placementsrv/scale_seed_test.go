package placementsrv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/placementsrv/dbstore"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
	"github.com/placement-syncd/placement-syncd/placementsrv/store/sqlite"
)

// A scale world is a cloud of compute hosts shaped like ../shared/bench's
// dataset (racks of 20 roots with one aggregate each, libvirt's standard
// traits, every 10th host a NUMA tree with a NIC, every 10th rack's disk
// on a sharing provider, instances filling about 30% of each host),
// written straight into an SQLite file through the backend in one
// transaction. Seeding through the API would take minutes at 100k hosts;
// the records are the same ones the ledger would have written.

// scaleHostTraits are the standard traits every root gets.
func scaleHostTraits() []string {
	return []string{"COMPUTE_NODE", "HW_CPU_X86_SSE41", "HW_CPU_X86_SSE42", "HW_CPU_X86_AVX",
		"HW_CPU_X86_AESNI", "COMPUTE_NET_ATTACH_INTERFACE", "COMPUTE_VOLUME_EXTEND", "COMPUTE_VOLUME_MULTI_ATTACH",
		"COMPUTE_IMAGE_TYPE_QCOW2", "COMPUTE_IMAGE_TYPE_RAW", "COMPUTE_DEVICE_TAGGING", "COMPUTE_TRUSTED_CERTS",
		"COMPUTE_NET_VIF_MODEL_VIRTIO", "COMPUTE_STORAGE_BUS_VIRTIO", "COMPUTE_GRAPHICS_MODEL_VGA"}
}

// scaleUUID is a deterministic uuid for the i-th record of a kind.
func scaleUUID(kind, i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", kind, i) }

const (
	kindRoot = iota + 1
	kindChild
	kindSharing
	kindAggregate
	kindConsumer
)

// scaleDB returns the path of an SQLite file holding the scale world of
// the given number of hosts, seeding it on first use. The file is kept
// under the test cache directory (os.UserCacheDir, or the temporary
// directory), so that later runs skip the seeding; callers copy it before
// writing.
func scaleDB(tb testing.TB, hosts int) string {
	tb.Helper()
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "placement-syncd-scale")
	path := filepath.Join(dir, fmt.Sprintf("hosts-%d-v1.db", hosts))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	tmp := path + ".seeding"
	_ = os.Remove(tmp)
	start := time.Now()
	seedScaleWorld(tb, tmp, hosts)
	if err := os.Rename(tmp, path); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("seeded %d hosts in %s: %s", hosts, time.Since(start).Round(time.Millisecond), path)
	return path
}

// seedScaleWorld creates the database at path (the ledger inserts the
// standard traits and classes), then writes the world in one transaction.
func seedScaleWorld(tb testing.TB, path string, hosts int) {
	tb.Helper()
	ctx := context.Background()
	l, err := dbstore.OpenFile(ctx, path, dbstore.Options{Migrate: true})
	if err != nil {
		tb.Fatal(err)
	}
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	be, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer be.Close()
	recs, err := be.Load(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	tx, err := be.Begin(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	w := &scaleWriter{ctx: ctx, tx: tx, now: time.Now().UTC(), classes: map[string]int64{}, traits: map[string]int64{}}
	for _, c := range recs.ResourceClasses {
		w.classes[c.Name] = c.ID
	}
	for _, t := range recs.Traits {
		w.traits[t.Name] = t.ID
	}
	if err := w.world(hosts); err != nil {
		tb.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
}

// scaleWriter writes the world's rows; the first error sticks.
type scaleWriter struct {
	ctx      context.Context
	tx       store.Tx
	now      time.Time
	classes  map[string]int64
	traits   map[string]int64
	projects []int64
	users    []int64
	ctype    int64
	err      error
	seq      int // instances so far: consumer uuids and flavors
}

type scaleInv struct {
	class           string
	total, reserved int64
	ratio           float64
}

func (w *scaleWriter) check(err error) {
	if w.err == nil && err != nil {
		w.err = err
	}
}

func (w *scaleWriter) world(hosts int) error {
	for i := range 20 {
		id, err := w.tx.InsertProject(w.ctx, fmt.Sprintf("%032x", i+1))
		w.check(err)
		w.projects = append(w.projects, id)
		id, err = w.tx.InsertUser(w.ctx, fmt.Sprintf("u%031x", i+1))
		w.check(err)
		w.users = append(w.users, id)
	}
	var err error
	w.ctype, err = w.tx.InsertConsumerType(w.ctx, store.ConsumerTypeRow{Name: "INSTANCE", CreatedAt: w.now})
	w.check(err)
	racks := (hosts + 19) / 20
	for r := 0; r < racks && w.err == nil; r++ {
		agg, err := w.tx.InsertAggregate(w.ctx, scaleUUID(kindAggregate, r))
		w.check(err)
		sharing := int64(0)
		if r%10 == 5 {
			sharing = w.provider(scaleUUID(kindSharing, r), fmt.Sprintf("ss-%05d", r), 0,
				[]scaleInv{{"DISK_GB", 40000, 0, 1}}, []string{"MISC_SHARES_VIA_AGGREGATE"}, agg)
		}
		for i := r * 20; i < min(hosts, (r+1)*20); i++ {
			w.host(i, agg, sharing)
		}
	}
	return w.err
}

// host writes compute host i of a rack (aggregate agg), with its disk on
// the sharing provider when there is one.
func (w *scaleWriter) host(i int, agg, sharing int64) {
	name := fmt.Sprintf("cn-%06d", i)
	traits := scaleHostTraits()
	if i%2 == 0 {
		traits = append(traits, "HW_CPU_X86_AVX2")
	}
	var invs []scaleInv
	if sharing == 0 {
		invs = append(invs, scaleInv{"DISK_GB", 2000, 0, 1})
	}
	nested := i%10 == 4
	if !nested {
		invs = append(invs, scaleInv{"VCPU", 32, 0, 16}, scaleInv{"MEMORY_MB", 131072, 512, 1.5})
	}
	root := w.provider(scaleUUID(kindRoot, i), name, 0, invs, traits, agg)
	disk := sharing
	if disk == 0 {
		disk = root
	}
	if !nested {
		w.fill(root, disk, 131072*3/10)
		return
	}
	for n := range 2 {
		numa := w.provider(scaleUUID(kindChild, i*4+n), fmt.Sprintf("%s-numa%d", name, n), root,
			[]scaleInv{{"VCPU", 16, 0, 16}, {"MEMORY_MB", 65536, 256, 1.5}}, []string{"HW_NUMA_ROOT"}, 0)
		w.fill(numa, disk, 65536*3/10)
	}
	w.provider(scaleUUID(kindChild, i*4+2), name+"-nic0", root,
		[]scaleInv{{"NET_BW_EGR_KILOBIT_PER_SEC", 10000000, 0, 1}}, []string{"HW_NIC_SRIOV"}, 0)
}

// provider writes one provider with its inventories, traits and
// aggregate (0: none) and returns its id.
func (w *scaleWriter) provider(uuid, name string, parent int64, invs []scaleInv, traits []string, agg int64) int64 {
	if w.err != nil {
		return 0
	}
	id, err := w.tx.InsertProvider(w.ctx, store.ProviderRow{UUID: uuid, Name: name, Generation: 1,
		ParentID: parent, RootID: parent, CreatedAt: w.now, UpdatedAt: w.now})
	w.check(err)
	for _, in := range invs {
		w.check(w.tx.InsertInventory(w.ctx, store.InventoryRow{ProviderID: id, ClassID: w.classes[in.class], CreatedAt: w.now,
			InventoryAmounts: store.InventoryAmounts{Total: in.total, Reserved: in.reserved, MinUnit: 1,
				MaxUnit: in.total, StepSize: 1, AllocationRatio: in.ratio}}))
	}
	for _, t := range traits {
		w.check(w.tx.AddProviderTrait(w.ctx, id, w.traits[t]))
	}
	if agg != 0 {
		w.check(w.tx.AddProviderAggregate(w.ctx, id, agg))
	}
	return id
}

// fill adds instances on a host (VCPU and MEMORY_MB on cpu, DISK_GB on
// disk) until the next would pass memBudget MB or 600 GB of disk.
func (w *scaleWriter) fill(cpu, disk int64, memBudget int64) {
	flavors := [][3]int64{{1, 2048, 20}, {2, 4096, 40}, {4, 8192, 80}, {8, 16384, 160}}
	var mem, gb int64
	for w.err == nil {
		f := flavors[w.seq%len(flavors)]
		if mem+f[1] > memBudget || gb+f[2] > 600 {
			return
		}
		mem, gb = mem+f[1], gb+f[2]
		c, err := w.tx.InsertConsumer(w.ctx, store.ConsumerRow{UUID: scaleUUID(kindConsumer, w.seq),
			ProjectID: w.projects[w.seq%20], UserID: w.users[w.seq%20], ConsumerTypeID: w.ctype,
			Generation: 1, CreatedAt: w.now, UpdatedAt: w.now})
		w.check(err)
		w.seq++
		for _, a := range []struct {
			rp    int64
			class string
			used  int64
		}{{cpu, "VCPU", f[0]}, {cpu, "MEMORY_MB", f[1]}, {disk, "DISK_GB", f[2]}} {
			_, err := w.tx.InsertAllocation(w.ctx, store.AllocationRow{ProviderID: a.rp, ConsumerID: c,
				ClassID: w.classes[a.class], Used: a.used, CreatedAt: w.now, UpdatedAt: w.now})
			w.check(err)
		}
	}
}
