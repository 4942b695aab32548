package fpga_test

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
)

func TestProviderUUID_MatchesCyborg(t *testing.T) {
	// Python: str(uuid.uuid3(uuid.NAMESPACE_DNS, "host-a_0000:5e:00.0"))
	if got, want := fpga.ProviderUUID("host-a", "0000:5e:00.0"), "16438529-20ac-39c9-bfa3-0847440e6a6f"; got != want {
		t.Fatalf("ProviderUUID = %s, want %s", got, want)
	}
}

func TestObserve_Sources(t *testing.T) {
	d, err := fpga.New(fpga.Options{Host: "host-a", File: "testdata/devices.json", SysfsRoot: "testdata/sysfs", ComputeNodeUUID: "0d9e6b7e-3c1f-4a39-a5b3-6a2a5c2b4d10"})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := d.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tree.Providers) != 3 {
		t.Fatalf("%d providers, want 3", len(tree.Providers))
	}
	p := tree.Providers[1] // 0000:5e:00.0 from sysfs
	if p.Name != "host-a_0000:5e:00.0" || p.Parent.UUID != "0d9e6b7e-3c1f-4a39-a5b3-6a2a5c2b4d10" || p.Owner != drivers.OwnerCyborg {
		t.Fatalf("provider %+v", p)
	}
	if inv := p.Inventories["FPGA"]; inv.Total != 2 || inv.MaxUnit != 2 || inv.Unavailable != "" {
		t.Fatalf("inventory %+v", inv)
	}
	if want := []string{"CUSTOM_FPGA_FUNCTION_ID_INTEL_CRYPTO_V1", "CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PRODUCT_0B30"}; !slices.Equal(p.Traits, want) {
		t.Fatalf("traits %v, want %v", p.Traits, want)
	}
	if x := tree.Providers[2]; x.Inventories["FPGA"].Total != 1 || !slices.Contains(x.Traits, "CUSTOM_FPGA_XILINX") {
		t.Fatalf("xilinx device %+v", x)
	}
}

func TestNew_Invalid(t *testing.T) {
	for name, o := range map[string]fpga.Options{
		"no host":   {File: "x"},
		"no source": {Host: "h"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := fpga.New(o); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestParseDevices_Invalid(t *testing.T) {
	for name, body := range map[string]string{
		"bad address": `{"devices":[{"pci_address":"5e:00.0","vendor":"8086","product":"0b30"}]}`,
		"bad vendor":  `{"devices":[{"pci_address":"0000:5e:00.0","vendor":"intel","product":"0b30"}]}`,
		"negative":    `{"devices":[{"pci_address":"0000:5e:00.0","vendor":"8086","product":"0b30","regions":-1}]}`,
		"unknown key": `{"devices":[{"pci":"0000:5e:00.0"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := fpga.ParseDevices(bytes.NewReader([]byte(body))); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func FuzzParseDevices(f *testing.F) {
	seed, err := os.ReadFile("testdata/devices.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"devices":[]}`))
	f.Add([]byte(`{"devices":[{"pci_address":"0000:5E:00.7","vendor":"0x10EE","product":"5000","regions":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := fpga.ParseDevices(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, dv := range ds {
			if dv.Regions < 1 {
				t.Fatalf("device %+v has no regions", dv)
			}
			for _, tr := range fpga.Traits(dv) {
				if !drivers.IsCustom(tr) {
					t.Fatalf("device %+v: invalid trait %q", dv, tr)
				}
			}
		}
	})
}
