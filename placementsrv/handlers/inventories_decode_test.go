package handlers

import (
	"regexp"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
)

// FuzzDecodeInventories checks that no PUT-all body makes the decoder
// panic, and that whatever it accepts is well formed. Besides the seeds
// below, testdata/fuzz/FuzzDecodeInventories holds the PUT-all bodies of
// the HTTP tests' bad-input table (placementsrv's invBadInputCases).
func FuzzDecodeInventories(f *testing.F) {
	f.Add([]byte(`{"resource_provider_generation": 3, "inventories": {"VCPU": {"total": 8, "reserved": 1, "allocation_ratio": 1.5}, "DISK_GB": {"total": 5.0}}}`))
	f.Add([]byte(`{"inventories": {"A": {"total": 1}}, "inventories": {"B": {"total": 2}}, "resource_provider_generation": 0}`))
	sch := schema.New().InventoriesReplace()
	f.Fuzz(func(t *testing.T, body []byte) {
		gen, invs, _, err := decodeInventories(body, sch)
		if err != nil {
			if _, ok := apierror.As(err); !ok {
				t.Fatalf("non-HTTP error %T: %v", err, err)
			}
			return
		}
		seen := map[string]bool{}
		for _, inv := range invs {
			if seen[inv.ResourceClass] {
				t.Fatalf("class %s twice", inv.ResourceClass)
			}
			seen[inv.ResourceClass] = true
			// Keys outside the class pattern escape the schema, as
			// upstream; they fail later as unknown classes.
			if !classPattern.MatchString(inv.ResourceClass) {
				continue
			}
			if inv.Total < 1 || inv.MinUnit < 1 || inv.MaxUnit < 1 || inv.StepSize < 1 || inv.Reserved < 0 {
				t.Fatalf("accepted out-of-range inventory %+v", inv)
			}
		}
		if gen != gen+0 {
			t.Fatal("unreachable")
		}
	})
}

var classPattern = regexp.MustCompile(`^[A-Z0-9_]+$`)
