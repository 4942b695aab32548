package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/placement-syncd/placement-syncd/capacity/source"
	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// TestCapacity_Demo runs `placement-syncd capacity` against a running
// demo (serve with the agent and the reconciler; its Nova file has
// flavors): m1.small fits the compute node 31 times (memory: 65024 MB
// free / 2048), m1.large 3 times (65024 / 16384), baremetal.gold nowhere
// while both gold nodes clean (2 held back, by the agent's reason), and
// m1.tpm is not counted, with the reason. Run with -v to see the outputs.
func TestCapacity_Demo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	cfgPath := demoConfigFor(t, dir)
	demoInit(t, ctx, cfgPath)
	s := startAllInOne(t, cfgPath)
	waitCapacity(t, ctx, s.Daemon)
	cleanBothGold(t, ctx, cfgPath, s)

	capacity := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(ctx, append([]string{"capacity", "--config", cfgPath, "--url", s.URL}, args...), &out, &errb)
		t.Logf("$ placement-syncd capacity %s\n%s%s", strings.Join(args, " "), out.String(), errb.String())
		return code, out.String(), errb.String()
	}
	// The pre-filter follows the gate, and OWNER_NOVA is stamped a run
	// later: wait for the count the stamped cloud gives. The reason for
	// holding back comes with the agent's pass result, a moment after its
	// writes: until then the count names the reason "reserved".
	var rep source.ReportBody
	daemontest.Eventually(t, ctx, "m1.small fits 31 times and both gold nodes are held back for cleaning", func() bool {
		var out, errb bytes.Buffer
		if run(ctx, []string{"capacity", "--config", cfgPath, "--url", s.URL, "--json", "--by", "host"}, &out, &errb) != exitOK {
			return false
		}
		rep = source.ReportBody{}
		return json.Unmarshal(out.Bytes(), &rep) == nil && len(rep.Flavors) == 5 && rep.Flavors[0].Cloud == 31 &&
			rep.Flavors[2].HeldBack["cleaning"] == 2
	})
	small, large, gold, tpm := rep.Flavors[0], rep.Flavors[1], rep.Flavors[2], rep.Flavors[4]
	if len(small.Hosts) != 1 || small.Hosts[0].Name != "demo-compute" || small.Hosts[0].Count != 31 {
		t.Errorf("m1.small by host %+v, want demo-compute 31", small.Hosts)
	}
	if large.Cloud != 3 {
		t.Errorf("m1.large fits %d, want 3", large.Cloud)
	}
	if gold.Cloud != 0 || gold.HeldBack["cleaning"] == 0 || tpm.Error == "" || tpm.Public {
		t.Errorf("gold %+v, m1.tpm %+v", gold, tpm)
	}

	code, table, _ := capacity()
	if code != exitOK {
		t.Fatalf("capacity: exit %d", code)
	}
	for _, want := range []string{"FLAVOR", "m1.small", "baremetal.gold", "cleaning)", "m1.tpm: not counted: hw:tpm_"} {
		assertContains(t, table, want)
	}
	if got := lineFields(table, "m1.small"); strings.Join(got, " ") != "m1.small 1 yes 31 0" {
		t.Errorf("m1.small line %q, want id 1, public, 31 fit, none held back", got)
	}
	if code, zones, _ := capacity("--flavor", "m1.small", "--by", "az"); code != exitOK || !strings.Contains(zones, "ZONE") ||
		strings.Contains(zones, "baremetal.gold") {
		t.Errorf("by zone for m1.small: exit %d:\n%s", code, zones)
	}

	// Usage errors exit 2 before any request; the daemon's refusals 1.
	if code, _, errb := capacity("--by", "rack"); code != exitUsage || !strings.Contains(errb, "want host, aggregate or zone") {
		t.Errorf("--by rack: exit %d: %s", code, errb)
	}
	if code, _, errb := capacity("--flavor", "m9.huge"); code != exitFailure || !strings.Contains(errb, "404") || !strings.Contains(errb, "No flavor named m9.huge") {
		t.Errorf("unknown flavor: exit %d: %s", code, errb)
	}
	if code, _, errb := capacity("--token", "someone"); code != exitFailure || !strings.Contains(errb, "403") || !strings.Contains(errb, "placement-syncd:capacity") {
		t.Errorf("not an admin: exit %d: %s", code, errb)
	}
}
