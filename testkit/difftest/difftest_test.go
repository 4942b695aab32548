package difftest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/placementtest"
)

// The differential run's budget and targets. With the defaults it is a
// short end-to-end run against a fresh reference and a fresh server of
// ours; CI and developers raise the budget (docs/testing.md).
var (
	flagSeeds   = flag.String("difftest.seeds", "1", "comma-separated seeds, one fresh pair of servers each")
	flagSteps   = flag.Int("difftest.steps", 120, "steps per seed (a scenario step sends several requests)")
	flagMax     = flag.Int("difftest.max-mismatches", -1, "fail when more requests than this mismatch in all (-1: report only)")
	flagTrace   = flag.String("difftest.trace", "", "write the trace (JSONL, .gz to compress) here; with several seeds, .seedN is inserted before the extension")
	flagReplay  = flag.String("difftest.replay", "", "replay this trace instead of generating (../shared/repro format)")
	flagUpto    = flag.Int("difftest.upto", 0, "replay up to this op (0: all)")
	flagRef     = flag.String("difftest.ref", "", "base URL of a running reference (default: start a fresh one)")
	flagOurs    = flag.String("difftest.ours", "", "base URL of a running placement-syncd (default: start a fresh one)")
	flagReport  = flag.String("difftest.report", "", "also write the report to this file")
	flagRel     = flag.String("difftest.release", "8.0.0", "the upstream Placement release to compare with (8.0.0 or 15.0.0); ours follows the same release")
	flagOursRel = flag.String("difftest.ours-release", "", "the release ours follows, when not -difftest.release's (to see what tells the releases apart)")
)

// TestDifferential sends seeded request sequences (or a trace) to the
// reference and to ours and reports every difference, grouped by route
// and class with the op to replay up to. Deliberately wrong requests must
// never be answered with a 5xx, by either server.
func TestDifferential(t *testing.T) {
	total := Stats{Routes: map[string]int{}, Minors: map[int]int{}, Deliberate: map[string]int{}}
	rel, oursRel := parseReleases(t)
	var report strings.Builder
	fmt.Fprintf(&report, "reference: upstream Placement %s; ours with release %s\n\n", rel, oursRel)
	if *flagReplay != "" {
		recs, err := ReadTrace(*flagReplay)
		if err != nil {
			t.Fatal(err)
		}
		rn := startRunner(t, 0, rel, oursRel)
		if err := rn.Replay(recs, *flagUpto); err != nil {
			t.Fatal(err)
		}
		WriteReport(&report, "replay "+filepath.Base(*flagReplay)+" against "+rel.String(), rn.Stats, rn.Mismatches)
		WriteRefCrashes(&report, rn.RefCrashes)
		total = rn.Stats
	} else {
		seeds := parseSeeds(t, *flagSeeds)
		if len(seeds) > 1 && (*flagRef != "" || *flagOurs != "") {
			t.Fatal("running servers keep their state: give one seed with -difftest.ref or -difftest.ours")
		}
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				rn := runSeed(t, seed, rel, oursRel)
				WriteReport(&report, fmt.Sprintf("seed %d, %d steps, against %s", seed, *flagSteps, rel), rn.Stats, rn.Mismatches)
				WriteRefCrashes(&report, rn.RefCrashes)
				report.WriteString("\n")
				addStats(&total, rn.Stats)
			})
		}
	}
	t.Log("\n" + report.String())
	if *flagReport != "" {
		if err := os.WriteFile(*flagReport, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	t.Logf("difftest total (release %s): %s", rel, total.Summary())
	if total.Requests == 0 {
		t.Fatal("no requests were sent")
	}
	// The reference's own 5xx are its bugs: they show as mismatches
	// unless ours fails the same way, and are counted in the report.
	if total.Ours5xx > 0 {
		t.Errorf("ours answered %d requests with a 5xx (%d of them deliberately wrong)", total.Ours5xx, total.BadOurs5xx)
	}
	// A budget of CI's size must reach every route and microversion.
	if *flagReplay == "" && total.Requests >= 2000 {
		if missing := Uncovered(total); len(missing) > 0 {
			t.Errorf("routes never sent: %v", missing)
		}
		if missing := MissingMinors(total); len(missing) > 0 {
			t.Errorf("microversions never sent: %v", missing)
		}
	}
	if *flagMax >= 0 && total.Mismatched > *flagMax {
		t.Errorf("%d requests mismatched; at most %d may", total.Mismatched, *flagMax)
	}
}

func runSeed(t *testing.T, seed uint64, rel, oursRel placementtest.Release) *Runner {
	rn := startRunner(t, seed, rel, oursRel)
	if *flagTrace != "" {
		tw, err := CreateTrace(tracePath(*flagTrace, seed, strings.Contains(*flagSeeds, ",")))
		if err != nil {
			t.Fatal(err)
		}
		rn.Trace = tw
		defer func() {
			if err := tw.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	if err := rn.Run(NewGenerator(seed), *flagSteps); err != nil {
		t.Fatal(err)
	}
	return rn
}

// startRunner starts (or points at) the reference of release rel and ours
// following oursRel.
func startRunner(t *testing.T, seed uint64, rel, oursRel placementtest.Release) *Runner {
	ref, ours := *flagRef, *flagOurs
	if ref == "" {
		ref = placementtest.StartReferenceWith(t, placementtest.ReferenceOptions{Release: rel}).URL
	}
	if ours == "" {
		ours = placementtest.StartOurs(t, placementtest.Options{Release: oursRel}).URL
	}
	return NewRunner(ref, ours, seed)
}

// parseReleases reads -difftest.release and -difftest.ours-release.
func parseReleases(t *testing.T) (ref, ours placementtest.Release) {
	ref, err := placementtest.ParseRelease(*flagRel)
	if err != nil {
		t.Fatalf("-difftest.release: %v", err)
	}
	if *flagOursRel == "" {
		return ref, ref
	}
	if ours, err = placementtest.ParseRelease(*flagOursRel); err != nil {
		t.Fatalf("-difftest.ours-release: %v", err)
	}
	return ref, ours
}

func parseSeeds(t *testing.T, s string) []uint64 {
	var out []uint64
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			t.Fatalf("-difftest.seeds: %v", err)
		}
		out = append(out, n)
	}
	return out
}

func tracePath(p string, seed uint64, several bool) string {
	if !several {
		return p
	}
	base, ext := p, ""
	for _, e := range []string{".jsonl.gz", ".jsonl", ".gz"} {
		if strings.HasSuffix(p, e) {
			base, ext = strings.TrimSuffix(p, e), e
			break
		}
	}
	return fmt.Sprintf("%s.seed%d%s", base, seed, ext)
}

func addStats(total *Stats, s Stats) {
	total.Requests += s.Requests
	total.Mismatched += s.Mismatched
	for k, n := range s.Deliberate {
		total.Deliberate[k] += n
	}
	total.Bad += s.Bad
	for k, v := range s.Routes {
		total.Routes[k] += v
	}
	for k, v := range s.Minors {
		total.Minors[k] += v
	}
	total.BadRef5xx += s.BadRef5xx
	total.BadOurs5xx += s.BadOurs5xx
	total.Ref5xx += s.Ref5xx
	total.Ours5xx += s.Ours5xx
}
