package difftest

import (
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// TestTwoServersOfOursAgree runs a sequence against two fresh servers of
// ours: whatever is not the API's answer (request ids, times, the uuids
// each server generates) must not show as a difference.
func TestTwoServersOfOursAgree(t *testing.T) {
	a := placementtest.StartOurs(t, placementtest.Options{})
	b := placementtest.StartOurs(t, placementtest.Options{})
	rn := NewRunner(a.URL, b.URL, 14)
	if err := rn.Run(NewGenerator(14), 300); err != nil {
		t.Fatal(err)
	}
	if rn.Stats.Requests < 300 {
		t.Errorf("only %d requests in 300 steps", rn.Stats.Requests)
	}
	if len(rn.genRef) == 0 {
		t.Error("no provider was created without a uuid: the mapping went untested")
	}
	if len(rn.Mismatches) > 0 {
		var sb strings.Builder
		WriteReport(&sb, "ours vs ours", rn.Stats, rn.Mismatches)
		t.Errorf("two servers of ours differ:\n%s", sb.String())
	}
}

// TestCappedServerDiffers runs against ours and ours capped at 1.30:
// requests above 1.30 must be reported, grouped, with the write after
// which the states may differ.
func TestCappedServerDiffers(t *testing.T) {
	a := placementtest.StartOurs(t, placementtest.Options{})
	b := placementtest.StartOurs(t, placementtest.Options{MaxMicroversion: "1.30"})
	rn := NewRunner(a.URL, b.URL, 12)
	if err := rn.Run(NewGenerator(12), 150); err != nil {
		t.Fatal(err)
	}
	groups := GroupMismatches(rn.Mismatches)
	if len(groups) == 0 {
		t.Fatal("no mismatch reported between 1.39 and a server capped at 1.30")
	}
	sawStatus, sawDiverged := false, false
	for _, m := range rn.Mismatches {
		sawStatus = sawStatus || strings.Contains(classes(m.Diffs), "status 200 vs 406")
		sawDiverged = sawDiverged || m.Diverged > 0
	}
	if !sawStatus || !sawDiverged {
		t.Errorf("status 200 vs 406 reported: %v; divergence noted: %v", sawStatus, sawDiverged)
	}
	var sb strings.Builder
	WriteReport(&sb, "capped", rn.Stats, rn.Mismatches)
	if !strings.Contains(sb.String(), "replay up to op") {
		t.Errorf("report without the op to replay up to:\n%s", sb.String())
	}
}
