package ledger

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	ghostConsumerC = "cccccccc-0000-4000-8000-0000000000c3"
	ghostConsumerX = "eeeeeeee-0000-4000-8000-0000000000e5"
	ghostProvider  = "11111111-2222-4333-8444-555555555555"
)

// TestLeftConsumersMatchDisk: the consumers an allocation write naming an
// unknown provider leaves behind (upstream's ensure_consumer commits them
// first) are in memory exactly as a reopen loads them, under both
// releases' capacity rules, through the write that later fills them.
func TestLeftConsumersMatchDisk(t *testing.T) {
	for _, rule := range []store.CapacityRule{store.CapacityStrict, store.CapacityNoWorse} {
		ctx := context.Background()
		l, db := newTestLedger(t)
		if _, _, err := l.SetInventories(ctx, rpUUID, 0, []store.Inventory{inv("VCPU", 4)}); err != nil {
			t.Fatal(err)
		}
		if err := l.ReplaceAllocationsUnder(ctx, rule, []store.ConsumerAllocations{alReq(ghostConsumerX, nil, alOn(rpUUID, "VCPU", 1))}); err != nil {
			t.Fatal(err)
		}
		moved := alReq(ghostConsumerX, alGen(1), alOn(ghostProvider, "VCPU", 1))
		moved.ProjectID = "p2"
		newType := alReq(alConsumerA, nil, alOn(rpUUID, "VCPU", 1))
		newType.ConsumerType = "MIGRATION"
		steps := []struct {
			name string
			run  func(l *Ledger) error
			want error
		}{
			{"unknown provider", func(l *Ledger) error {
				return l.ReplaceAllocationsUnder(ctx, rule, []store.ConsumerAllocations{newType, moved, alReq(alConsumerB, nil)})
			}, store.ErrInvalid},
			{"reshape naming an unknown provider", func(l *Ledger) error {
				return l.ReshapeUnder(ctx, rule, []store.ProviderInventories{{ProviderUUID: rpUUID, Generation: 2, Inventories: []store.Inventory{inv("VCPU", 4)}}},
					[]store.ConsumerAllocations{alReq(ghostConsumerC, nil, alOn(ghostProvider, "VCPU", 1))})
			}, store.ErrInvalid},
			{"left consumer written at 0", func(l *Ledger) error {
				return l.ReplaceAllocationsUnder(ctx, rule, []store.ConsumerAllocations{alReq(alConsumerA, alGen(0), alOn(rpUUID, "VCPU", 2))})
			}, nil},
		}
		for _, step := range steps {
			err := step.run(l)
			if step.want == nil && err != nil || step.want != nil && !errors.Is(err, step.want) {
				t.Fatalf("rule %d, %s: error %v, want %v", rule, step.name, err, step.want)
			}
			mem := alDump(l)
			if strings.Contains(mem, "MISSING-BACKLINK") {
				t.Fatalf("rule %d, %s: inconsistent links:\n%s", rule, step.name, mem)
			}
			l = reopen(t, l, db)
			if disk := alDump(l); disk != mem {
				t.Fatalf("rule %d, %s: memory and storage differ:\nmemory:\n%s\nstorage:\n%s", rule, step.name, mem, disk)
			}
		}
		want := strings.Join([]string{
			`consumer ` + alConsumerA + ` p/u type="INSTANCE" gen=1 [` + rpUUID + `/VCPU=2]`,
			`consumer ` + alConsumerB + ` p/u type="INSTANCE" gen=0 []`,
			`consumer ` + ghostConsumerC + ` p/u type="INSTANCE" gen=0 []`,
			`consumer ` + ghostConsumerX + ` p/u type="INSTANCE" gen=1 [` + rpUUID + `/VCPU=1]`,
			`rp ` + rpUUID + ` gen=3 allocs=2 usage=[VCPU=3] inv=[VCPU:4/0]`,
		}, "\n")
		if got := alDump(l); got != want {
			t.Fatalf("rule %d, final state:\n%s\nwant:\n%s", rule, got, want)
		}
	}
}
