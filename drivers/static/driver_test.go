package static_test

import (
	"os"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers/static"
)

func TestObserve(t *testing.T) {
	d, err := static.New(static.Options{File: "testdata/providers.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Providers) != 3 || tree.Providers[1].Parent.UUID != tree.Providers[0].UUID {
		t.Fatalf("tree %+v", tree)
	}
	if inv := tree.Providers[1].Inventories["PCPU"]; inv.Unavailable != "maintenance" || inv.Total != 8 {
		t.Fatalf("PCPU %+v", inv)
	}
	if a := tree.Providers[2].Aggregates; len(a) != 1 {
		t.Fatalf("aggregates %v", a)
	}
	if tree.Providers[0].Aggregates != nil {
		t.Fatal("aggregates not given must stay unmanaged (nil)")
	}
}

func TestParse_Invalid(t *testing.T) {
	for name, body := range map[string]string{
		"unknown key": "providers:\n  - uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01\n    nam: x\n",
		"bad uuid":    "providers:\n  - uuid: nope\n    name: x\n",
		"bad owner":   "providers:\n  - uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01\n    name: x\n    owner: OWNER_ME\n",
		"zero total":  "providers:\n  - uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01\n    name: x\n    inventories: {VCPU: {total: 0}}\n",
		"bad reason":  "providers:\n  - uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01\n    name: x\n    inventories: {VCPU: {total: 1, unavailable: tired}}\n",
		"child first": "providers:\n  - {uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a02, name: c, parent_uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01}\n  - {uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01, name: p}\n",
		"duplicate":   "providers:\n  - {uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01, name: a}\n  - {uuid: 7d3c1f7e-2b8a-4f0e-9a51-0c6f3f1d2a01, name: b}\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := static.Parse(strings.NewReader(body)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	seed, err := os.ReadFile("testdata/providers.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("providers: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := static.Parse(strings.NewReader(string(data)))
		if err != nil {
			return
		}
		if err := tree.Validate(); err != nil {
			t.Fatalf("Parse returned an invalid tree: %v", err)
		}
	})
}
