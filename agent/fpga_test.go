package agent_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/agent"
	"github.com/placement-syncd/placement-syncd/drivers"
	"github.com/placement-syncd/placement-syncd/drivers/fpga"
	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

const (
	devA = "0000:5e:00.0"
	devB = "0000:af:00.0"
)

func testFPGA(t *testing.T, srv *placementtest.Server) {
	host := "fpga-host"
	cn := nodeUUID(8, 0)
	srv.MustDo(t, http.StatusOK, http.MethodPost, "/resource_providers", "1.39", map[string]any{"name": host, "uuid": cn})

	dir := t.TempDir()
	devices := filepath.Join(dir, "devices.json")
	if err := os.WriteFile(devices, []byte(`{"devices":[
		{"pci_address":"`+devA+`","vendor":"8086","product":"0b30","function":"crypto-v1","regions":2},
		{"pci_address":"`+devB+`","vendor":"10ee","product":"5000","function":"","regions":1}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	out, in := filepath.Join(dir, "out"), filepath.Join(dir, "in")
	for _, f := range []string{out, in} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script, _ := filepath.Abs("testdata/program.sh")
	d, err := fpga.New(fpga.Options{
		Host: host, File: devices,
		ProgramCommand: []string{"sh", script, "{device}", "{image}", out, in},
		ProgramTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, srv.URL, []drivers.Driver{d}, nil)
	ctx := t.Context()
	if err := e.agent.SyncOnce(ctx); err != nil {
		t.Fatal(err)
	}
	uA, uB := fpga.ProviderUUID(host, devA), fpga.ProviderUUID(host, devB)
	fpgaReserved := func(t *testing.T, uuid string, want float64) {
		t.Helper()
		_, invs := srv.Inventories(t, uuid)
		inv, ok := invs["FPGA"]
		if !ok || inv["reserved"] != want || inv["reserved"] > inv["total"] {
			t.Fatalf("%s FPGA inventory %v, want reserved %v", uuid, invs, want)
		}
	}
	fpgaReserved(t, uA, 0)
	_, traits := srv.Traits(t, uA)
	if want := []string{"CUSTOM_FPGA_FUNCTION_ID_INTEL_CRYPTO_V1", "CUSTOM_FPGA_INTEL", "CUSTOM_FPGA_INTEL_PRODUCT_0B30", "OWNER_CYBORG"}; !slices.Equal(traits, want) {
		t.Fatalf("traits %v, want %v", traits, want)
	}
	status, body := srv.Do(t, http.MethodGet, "/resource_providers/"+uA, "1.39", nil)
	if status != http.StatusOK || !bytes.Contains(body, []byte(`"parent_provider_uuid": "`+cn)) && !bytes.Contains(body, []byte(`"parent_provider_uuid":"`+cn)) {
		t.Fatalf("device provider not under the compute node: %d %s", status, body)
	}

	t.Run("success", func(t *testing.T) {
		done := make(chan agent.ProgramResult, 1)
		go func() {
			r, err := e.agent.Program(ctx, devA, "gated", false)
			if err != nil {
				t.Errorf("Program: %v", err)
			}
			done <- r
		}()
		if _, err := os.ReadFile(out); err != nil { // blocks until the tool runs
			t.Fatal(err)
		}
		fpgaReserved(t, uA, 2) // held back while programming
		if err := os.WriteFile(in, []byte("go\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r := <-done
		if r.Result != "success" || r.Function != "gated" {
			t.Fatalf("result %+v", r)
		}
		fpgaReserved(t, uA, 0)
		_, traits := srv.Traits(t, uA)
		if !slices.Contains(traits, "CUSTOM_FPGA_FUNCTION_ID_INTEL_GATED") || slices.Contains(traits, "CUSTOM_FPGA_FUNCTION_ID_INTEL_CRYPTO_V1") {
			t.Fatalf("function trait not swapped: %v", traits)
		}
	})
	t.Run("failure", func(t *testing.T) {
		r, err := e.agent.Program(ctx, devA, "fail", false)
		if err == nil || r.Result != "failure" {
			t.Fatalf("result %+v, err %v", r, err)
		}
		fpgaReserved(t, uA, 2)
		if err := e.agent.SyncOnce(ctx); err != nil {
			t.Fatal(err)
		}
		fpgaReserved(t, uA, 2) // stays reserved across passes
		if got := e.counter(t, "placement_syncd_agent_fpga_devices_failed"); got != 1 {
			t.Fatalf("failed devices = %v", got)
		}
		if st := d.Status(); st[0].State != fpga.StateFailed || st[0].Error == "" {
			t.Fatalf("status %+v", st[0])
		}
	})
	t.Run("timeout", func(t *testing.T) {
		r, err := e.agent.Program(ctx, devA, "hang", false)
		var te *fpga.TimeoutError
		if !errors.As(err, &te) || r.Result != "timeout" {
			t.Fatalf("result %+v, err %v", r, err)
		}
		fpgaReserved(t, uA, 2)
	})
	t.Run("recover", func(t *testing.T) {
		if r, err := e.agent.Program(ctx, devA, "crypto-v2", false); err != nil || r.Result != "success" {
			t.Fatalf("result %+v, err %v", r, err)
		}
		fpgaReserved(t, uA, 0)
	})
	t.Run("allocation lands before the reservation", func(t *testing.T) { testProgramRace(t, srv, d, devB, uB) })
	t.Run("refused with allocations", func(t *testing.T) {
		consumer := nodeUUID(8, 1000)
		srv.Allocate(t, consumer, uB, map[string]int{"FPGA": 1})
		gen, _ := srv.Inventories(t, uB)
		h := httptest.NewServer(e.agent.LocalHandler("local-secret"))
		defer h.Close()
		post := func(token string, body agent.ProgramRequest) (int, agent.ProgramResult) {
			b, _ := json.Marshal(body)
			req, _ := http.NewRequest(http.MethodPost, h.URL+"/v1/fpga/program", bytes.NewReader(b))
			req.Header.Set("X-Auth-Token", token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var r agent.ProgramResult
			_ = json.NewDecoder(resp.Body).Decode(&r)
			return resp.StatusCode, r
		}
		if code, _ := post("wrong", agent.ProgramRequest{Device: devB, Image: "v1"}); code != http.StatusUnauthorized {
			t.Fatalf("bad token: %d", code)
		}
		if code, r := post("local-secret", agent.ProgramRequest{Device: "0000:ff:00.0", Image: "v1"}); code != http.StatusNotFound ||
			r.Error != "unknown device: 0000:ff:00.0" {
			t.Fatalf("unknown device: %d %+v, want 404 and the error", code, r)
		}
		if code, r := post("local-secret", agent.ProgramRequest{Device: devB}); code != http.StatusBadRequest || !strings.Contains(r.Error, "image is missing") {
			t.Fatalf("no image: %d %+v, want 400 saying so", code, r)
		}
		code, r := post("local-secret", agent.ProgramRequest{Device: devB, Image: "v1"})
		if code != http.StatusConflict || r.Result != "refused" {
			t.Fatalf("with allocations: %d %+v", code, r)
		}
		if g, _ := srv.Inventories(t, uB); g != gen {
			t.Fatalf("a refused request wrote to Placement (generation %d -> %d)", gen, g)
		}
		code, r = post("local-secret", agent.ProgramRequest{Device: devB, Image: "v1", Force: true})
		if code != http.StatusOK || r.Result != "success" {
			t.Fatalf("forced: %d %+v", code, r)
		}
		fpgaReserved(t, uB, 0)
		srv.Deallocate(t, consumer)
		if got := e.counter(t, "placement_syncd_agent_fpga_programs_total", "result", "refused"); got != 1 {
			t.Fatalf("refused = %v", got)
		}
	})
}
