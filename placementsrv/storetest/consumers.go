package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

const (
	consumerC  = "cccccccc-0000-4000-8000-000000000003"
	consumerD  = "dddddddd-0000-4000-8000-000000000004"
	consumerX  = "eeeeeeee-0000-4000-8000-000000000005"
	noProvider = "11111111-2222-4333-8444-555555555555"
)

// testLeftConsumers pins which failed allocation writes leave consumers
// behind, as upstream Placement does in 8.0.0 and 15.0.0 alike (under
// either release's capacity rule): it commits each new consumer, at
// generation 0 and with the project, user and type asked for, before it
// looks up the providers a write names. An unknown provider (a 400) keeps
// them, as does a write that leaves a new consumer without allocations;
// a consumer generation conflict, an unknown class or a refused capacity
// removes them again. Existing consumers are left as they were. What is
// left outlives a reopen, and the next write for it must send generation
// 0.
func testLeftConsumers(rule store.CapacityRule) func(t *testing.T, s Storage) {
	return func(t *testing.T, s Storage) {
		e := openLedger(t, s)
		e.newProvider(rpUUID, inv("VCPU", 4))
		write := func(reqs ...store.ConsumerAllocations) error {
			return e.l.ReplaceAllocationsUnder(e.ctx, rule, reqs)
		}
		must(t, write(claim(consumerX, nil, on(rpUUID, "VCPU", 1))))
		unknown := "Allocation for resource provider '" + noProvider + "' that does not exist."

		a := claim(consumerA, nil, on(rpUUID, "VCPU", 1))
		a.ProjectID, a.UserID, a.ConsumerType = "pa", "ua", "MIGRATION"
		moved := claim(consumerX, gen(1), on(noProvider, "VCPU", 1))
		moved.ProjectID = "p2"
		err := write(a, moved, claim(consumerB, nil))
		if !errors.Is(err, store.ErrInvalid) || store.Detail(err) != unknown {
			t.Fatalf("write naming an unknown provider: %v, want %q", err, unknown)
		}
		err = e.l.ReshapeUnder(e.ctx, rule, []store.ProviderInventories{{ProviderUUID: rpUUID, Generation: 2, Inventories: []store.Inventory{inv("VCPU", 4)}}},
			[]store.ConsumerAllocations{claim(consumerC, nil, on(noProvider, "VCPU", 1))})
		if !errors.Is(err, store.ErrInvalid) || store.Detail(err) != unknown {
			t.Fatalf("reshape naming an unknown provider: %v, want %q", err, unknown)
		}
		left := []string{
			consumerA + " pa/ua MIGRATION gen=0 allocations=0",
			consumerB + " p/u INSTANCE gen=0 allocations=0",
			consumerC + " p/u INSTANCE gen=0 allocations=0",
			consumerX + " p/u INSTANCE gen=1 allocations=1",
		}
		e.sameConsumers("after the unknown provider", left, 2)

		for _, tc := range []struct {
			name string
			reqs []store.ConsumerAllocations
			kind error
		}{
			{"over capacity", []store.ConsumerAllocations{claim(consumerD, nil, on(rpUUID, "VCPU", 9))}, store.ErrCapacityExceeded},
			{"unknown class", []store.ConsumerAllocations{claim(consumerD, nil, on(rpUUID, "CUSTOM_NOPE", 1))}, store.ErrNotFound},
			{"a later consumer's generation", []store.ConsumerAllocations{claim(consumerD, nil, on(rpUUID, "VCPU", 1)), claim(consumerX, gen(7))}, store.ErrConsumerGeneration},
			{"a left consumer written as new", []store.ConsumerAllocations{claim(consumerD, nil), claim(consumerA, nil, on(rpUUID, "VCPU", 1))}, store.ErrConsumerGeneration},
		} {
			if err := write(tc.reqs...); !errors.Is(err, tc.kind) {
				t.Fatalf("%s: %v, want %v", tc.name, err, tc.kind)
			}
			e.sameConsumers(tc.name, left, 2)
		}
		e.reopen()
		e.sameConsumers("after a reopen", left, 2)
		err = write(claim(consumerA, nil, on(rpUUID, "VCPU", 1)))
		if want := "consumer generation conflict - expected 0 but got None"; !errors.Is(err, store.ErrConsumerGeneration) || store.Detail(err) != want {
			t.Fatalf("left consumer written as new after a reopen: %v, want %q", err, want)
		}

		// Generation 0 writes them; an empty write at 0 holds nothing to
		// remove, so the consumer stays; emptying a written one removes it.
		must(t, write(claim(consumerA, gen(0), on(rpUUID, "VCPU", 1)), claim(consumerB, gen(0)), claim(consumerD, nil)))
		must(t, write(claim(consumerC, gen(0), on(rpUUID, "VCPU", 2))))
		must(t, write(claim(consumerC, gen(1))))
		e.reopen()
		e.sameConsumers("after the writes at generation 0", []string{
			consumerA + " p/u INSTANCE gen=1 allocations=1",
			consumerB + " p/u INSTANCE gen=0 allocations=0",
			consumerD + " p/u INSTANCE gen=0 allocations=0",
			consumerX + " p/u INSTANCE gen=1 allocations=1",
		}, 5)
	}
}

// sameConsumers fails unless the storage holds exactly the consumers want
// ("uuid project/user type gen=N allocations=K", in uuid order) and rp
// has generation rpGen.
func (e *env) sameConsumers(what string, want []string, rpGen int64) {
	e.t.Helper()
	r := e.records()
	names := func(rows []store.ExternalIDRow) map[int64]string {
		m := map[int64]string{}
		for _, x := range rows {
			m[x.ID] = x.ExternalID
		}
		return m
	}
	projects, users, types := names(r.Projects), names(r.Users), map[int64]string{}
	for _, ct := range r.ConsumerTypes {
		types[ct.ID] = ct.Name
	}
	held := map[int64]int{}
	for _, a := range r.Allocations {
		held[a.ConsumerID]++
	}
	var got []string
	for _, c := range r.Consumers {
		got = append(got, fmt.Sprintf("%s %s/%s %s gen=%d allocations=%d",
			c.UUID, projects[c.ProjectID], users[c.UserID], types[c.ConsumerTypeID], c.Generation, held[c.ID]))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		e.t.Fatalf("%s: consumers\n%q\nwant\n%q", what, got, want)
	}
	if g := r.Providers[slices.IndexFunc(r.Providers, func(p store.ProviderRow) bool { return p.UUID == rpUUID })].Generation; g != rpGen {
		e.t.Fatalf("%s: provider generation %d, want %d", what, g, rpGen)
	}
}
