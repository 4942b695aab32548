package handlers

import (
	"errors"
	"fmt"
	"testing"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/store"
)

// TestAllocationWriteError pins the answers to a refused allocation write,
// PUT's and POST's. An unknown provider is a 400 with the store's detail
// alone: upstream raises it from the handler once it has created the new
// consumers, which it keeps (and so does the store). The other refusals
// come from upstream's write, which removes them: an unknown class is a
// 400 with the handler's prefix (POST's has no colon), the conflicts and
// capacity 409s.
func TestAllocationWriteError(t *testing.T) {
	const (
		put     = "Unable to allocate inventory for consumer " + alConsumer + ": "
		post    = "Unable to allocate inventory "
		unknown = "Allocation for resource provider '" + alRP + "' that does not exist."
		class   = "No such resource class CUSTOM_NOPE."
		gen     = "consumer generation conflict - expected 0 but got None"
		moved   = "resource provider generation conflict"
		full    = "Unable to create allocation for 'VCPU' on resource provider '" + alRP + "'. The requested amount would exceed the capacity."
	)
	for _, tc := range []struct {
		kind   error
		detail string
		prefix string
		status int
		code   string
		want   string
	}{
		{store.ErrInvalid, unknown, put, 400, apierror.CodeDefault, unknown},
		{store.ErrInvalid, unknown, post, 400, apierror.CodeDefault, unknown},
		{store.ErrNotFound, class, put, 400, apierror.CodeDefault, put + class},
		{store.ErrNotFound, class, post, 400, apierror.CodeDefault, "Unable to allocate inventory " + class},
		{store.ErrConsumerGeneration, gen, put, 409, apierror.CodeConcurrentUpdate, gen},
		{store.ErrConcurrentUpdate, moved, post, 409, apierror.CodeConcurrentUpdate, "Inventory and/or allocations changed while attempting to allocate: " + moved},
		{store.ErrCapacityExceeded, full, put, 409, apierror.CodeDefault, "Unable to allocate inventory: " + full},
	} {
		err := allocationWriteError(store.Errorf(tc.kind, tc.detail), tc.prefix)
		ae, ok := apierror.As(err)
		if !ok || ae.Status != tc.status || ae.Code != tc.code || ae.Detail != tc.want {
			t.Errorf("%v %q with prefix %q: %#v, want %d %s %q", tc.kind, tc.detail, tc.prefix, err, tc.status, tc.code, tc.want)
		}
	}
	if err := allocationWriteError(nil, put); err != nil {
		t.Errorf("nil: %v", err)
	}
	other := fmt.Errorf("insert consumer: %w", errors.New("disk full"))
	if err := allocationWriteError(other, put); err != other {
		t.Errorf("another error: %v, want it unchanged", err)
	}
}

// TestDecodeConsumersOrder: POST /allocations' consumers come in request
// order, a repeated consumer at its first place with its last value, as
// in upstream's dict. Upstream ensures (creates) them in that order before
// it looks any provider up, and reports the first offender in it; the
// forms before 1.8, 1.28 and 1.38 lack a project, a generation check and
// a type.
func TestDecodeConsumersOrder(t *testing.T) {
	const (
		b = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
		a = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	)
	one := func(gen, kind string) string {
		return `{"allocations": {"` + alRP + `": {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": ` + gen + `, "consumer_type": "` + kind + `"}`
	}
	body := `{"` + b + `": ` + one("null", "INSTANCE") + `, "` + a + `": {"allocations": {}, "project_id": "p", "user_id": "u", "consumer_generation": 0, "consumer_type": "MIGRATION"}, "` + b + `": ` + one("3", "MIGRATION") + `}`
	got, err := decodeConsumersDict([]byte(body), microversion.Version{Major: 1, Minor: 38})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ConsumerUUID != b || got[1].ConsumerUUID != a {
		t.Fatalf("consumers %+v, want %s then %s", got, b, a)
	}
	if g := got[0].Generation; !got[0].CheckGeneration || g == nil || *g != 3 || got[0].ConsumerType != "MIGRATION" || len(got[0].Allocations) != 1 {
		t.Errorf("repeated consumer %+v, want its last value (generation 3, MIGRATION, one allocation)", got[0])
	}
	if g := got[1].Generation; g == nil || *g != 0 || len(got[1].Allocations) != 0 {
		t.Errorf("emptied consumer %+v, want generation 0 and no allocations", got[1])
	}

	older, err := decodeConsumersDict([]byte(`{"`+a+`": {"allocations": {}, "project_id": "p", "user_id": "u"}}`), microversion.Version{Major: 1, Minor: 27})
	if err != nil || len(older) != 1 || older[0].CheckGeneration || older[0].ConsumerType != "" || older[0].ProjectID != "p" {
		t.Errorf("1.27: %+v %v, want no generation check and no type", older, err)
	}
	put, err := decodeConsumerAllocations(a, []byte(`{"allocations": [{"resource_provider": {"uuid": "`+alRP+`"}, "resources": {"VCPU": 1}}]}`), microversion.Version{Major: 1, Minor: 7})
	if err != nil || put.ProjectID != store.IncompleteConsumerID || put.UserID != store.IncompleteConsumerID || put.CheckGeneration {
		t.Errorf("1.7: %+v %v, want the incomplete consumer's project and user", put, err)
	}
}
