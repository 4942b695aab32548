package novaclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/novatest"
)

// TestFlavorsRealNova: flavors created through the real nova-api, with
// extra specs and one private, come back whole and in Nova's order,
// across pages (nova-api's max_limit is novatest.MaxLimit), with swap
// and ephemeral in Nova's units.
func TestFlavorsRealNova(t *testing.T) {
	nova := realNova.Get(t)
	ctx := context.Background()
	var want []Flavor
	for i := range 2*novatest.MaxLimit + 1 {
		f := Flavor{ID: fmt.Sprintf("fl-%d", i), Name: fmt.Sprintf("m1.t%d", i), VCPUs: int64(i + 1), RAM: int64(512 * (i + 1)),
			Disk: int64(i), Ephemeral: int64(i % 2), Swap: int64(100 * (i % 3)), Public: i != 3,
			ExtraSpecs: map[string]string{}}
		body := map[string]any{"flavor": map[string]any{"id": f.ID, "name": f.Name, "vcpus": f.VCPUs, "ram": f.RAM,
			"disk": f.Disk, "OS-FLV-EXT-DATA:ephemeral": f.Ephemeral, "swap": f.Swap, "os-flavor-access:is_public": f.Public}}
		if code, data, err := nova.Do(ctx, http.MethodPost, "/flavors", body, nil); err != nil || code != http.StatusOK {
			t.Fatalf("create %s: %d %s %v", f.Name, code, data, err)
		}
		if i%2 == 0 {
			f.ExtraSpecs = map[string]string{"resources:CUSTOM_BAREMETAL_GOLD": "1", "resources:VCPU": "0",
				"trait:HW_CPU_X86_AVX2": "required", "hw:cpu_policy": "dedicated"}
			specs := map[string]any{"extra_specs": f.ExtraSpecs}
			if code, data, err := nova.Do(ctx, http.MethodPost, "/flavors/"+f.ID+"/os-extra_specs", specs, nil); err != nil || code != http.StatusOK {
				t.Fatalf("extra specs of %s: %d %s %v", f.Name, code, data, err)
			}
		}
		want = append(want, f)
	}
	api, err := Open(ctx, Settings{Endpoint: nova.Endpoint, Token: novatest.Token})
	if err != nil {
		t.Fatal(err)
	}
	got, err := api.(FlavorLister).Flavors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Flavor{}
	for _, f := range got {
		byID[f.ID] = f
	}
	for _, w := range want {
		if g, ok := byID[w.ID]; !ok || !reflect.DeepEqual(g, w) {
			t.Errorf("flavor %s: got %+v (listed %v), want %+v", w.ID, g, ok, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d flavors listed, want %d", len(got), len(want))
	}
}

// TestFlavorsFile: the file source reads the flavors answer (swap ""
// as Nova answers it before 2.75, is_public absent counting as public),
// and refuses a file without flavors or a flavor without extra specs.
func TestFlavorsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) File {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return File{Path: p}
	}
	ctx := context.Background()
	f := write("ok.json", `{"flavors": [
	  {"id": "1", "name": "m1.small", "vcpus": 1, "ram": 2048, "disk": 20, "OS-FLV-EXT-DATA:ephemeral": 5, "swap": "",
	   "os-flavor-access:is_public": false, "OS-FLV-DISABLED:disabled": true, "extra_specs": {"hw:cpu_policy": "dedicated"}},
	  {"id": "2", "name": "bm.gold", "vcpus": 8, "ram": 4096, "disk": 100, "swap": 1025, "extra_specs": {}}]}`)
	got, err := f.Flavors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []Flavor{
		{ID: "1", Name: "m1.small", VCPUs: 1, RAM: 2048, Disk: 20, Ephemeral: 5, Public: false, Disabled: true,
			ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}},
		{ID: "2", Name: "bm.gold", VCPUs: 8, RAM: 4096, Disk: 100, Swap: 1025, Public: true, ExtraSpecs: map[string]string{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	for name, c := range map[string]struct{ body, want string }{
		"none.json":   {`{"aggregates": []}`, `has no "flavors"`},
		"old.json":    {`{"flavors": [{"id": "1", "name": "m1.old"}]}`, `flavor "m1.old" has no extra_specs`},
		"swap.json":   {`{"flavors": [{"id": "1", "name": "m1.x", "swap": "big", "extra_specs": {}}]}`, `bad swap "big"`},
		"broken.json": {`{"flavors": [`, "decode"},
	} {
		_, err := write(name, c.body).Flavors(ctx)
		if err == nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrUnavailable with %q", name, err, c.want)
		}
	}
}
