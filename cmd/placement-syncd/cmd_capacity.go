package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/placement-syncd/placement-syncd/capacity/source"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/microversion"
)

// capacityPath is the daemon's capacity route (admin only, not Placement's).
const capacityPath = "/_placement-syncd/capacity"

// cmdCapacity asks the running daemon how many more of each Nova flavor
// fit (capacity by flavor, capacity.enabled) and prints a table, or the
// daemon's JSON. The daemon counts from the read model the scheduler is
// answered from, with the flavors it last read from Nova.
func cmdCapacity(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := newConfigFlagSet("capacity", "placement-syncd capacity [--flavor NAME] [--by host|aggregate|zone] [--json] [--config FILE] [--url URL] [--token TOKEN]", stderr, configSpec{noDB: true})
	flavor := fs.String("flavor", "", "only this flavor (its name)")
	by := fs.String("by", "", "break the counts down by host, aggregate or zone (az)")
	base := fs.String("url", "", "the daemon's base URL (default: http:// and api.listen)")
	token := fs.String("token", "", "X-Auth-Token of an admin (default: reconciler.placement.token, \"admin\" under noauth2)")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 0 {
		return usageError{fmt.Errorf("capacity: unexpected argument %q", words[0])}
	}
	if !slices.Contains([]string{"", source.ByHost, source.ByAggregate, source.ByZone, "az"}, *by) {
		return usageError{fmt.Errorf("capacity: --by %q: want host, aggregate or zone", *by)}
	}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "flavor" })
	if given && *flavor == "" {
		return usageError{errors.New("capacity: --flavor: empty name")}
	}
	cfg, _, err := common.load()
	if err != nil {
		return err
	}
	if *base == "" {
		*base = assemble.LocalURL(cfg.API.Listen)
	}
	if *token == "" {
		*token = cfg.Reconciler.Placement.Token
	}
	q := url.Values{}
	if *flavor != "" {
		q.Set("flavor", *flavor)
	}
	if *by != "" {
		q.Set("by", *by)
	}
	u := strings.TrimSuffix(*base, "/") + capacityPath
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	body, err := daemonGet(ctx, "capacity", u, *token, microversion.Max.String())
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := stdout.Write(append(body, '\n'))
		return err
	}
	var rep source.ReportBody
	if err := json.Unmarshal(body, &rep); err != nil {
		return fmt.Errorf("capacity: decode the daemon's answer: %w", err)
	}
	printCapacity(stdout, &rep)
	return nil
}

// printCapacity prints the flavors' totals, then the breakdown asked for,
// then what the counts leave out (untranslatable flavors, notes).
func printCapacity(w io.Writer, rep *source.ReportBody) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAVOR\tID\tPUBLIC\tFITS\tHELD BACK\t")
	for _, f := range rep.Flavors {
		if f.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t\n", f.Name, f.ID, yesNo(f.Public))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t\n", f.Name, f.ID, yesNo(f.Public), f.Cloud, heldBack(f.HeldBack))
	}
	tw.Flush()
	switch rep.By {
	case source.ByZone:
		printBreakdown(w, "ZONE\tFITS", rep, func(f source.FlavorBody) []string {
			var rows []string
			for _, z := range slices.Sorted(maps.Keys(f.Zones)) {
				rows = append(rows, fmt.Sprintf("%s\t%d", z, f.Zones[z]))
			}
			return rows
		})
	case source.ByAggregate:
		printBreakdown(w, "AGGREGATE\tUUID\tZONE\tFITS", rep, func(f source.FlavorBody) []string {
			var rows []string
			for _, a := range f.Aggregates {
				rows = append(rows, fmt.Sprintf("%s\t%s\t%s\t%d", a.Name, a.UUID, a.Zone, a.Count))
			}
			return rows
		})
	case source.ByHost:
		printBreakdown(w, "HOST\tZONE\tFITS\tHELD BACK\tREASON", rep, func(f source.FlavorBody) []string {
			var rows []string
			for _, h := range f.Hosts {
				rows = append(rows, fmt.Sprintf("%s\t%s\t%d\t%d\t%s", h.Name, h.Zone, h.Count, h.HeldBack, h.Reason))
			}
			return rows
		})
	}
	printCapacityNotes(w, rep)
}

// printBreakdown prints one table of the flavors' rows under header.
func printBreakdown(w io.Writer, header string, rep *source.ReportBody, rows func(source.FlavorBody) []string) {
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "FLAVOR\t%s\t\n", header)
	for _, f := range rep.Flavors {
		for _, r := range rows(f) {
			fmt.Fprintf(tw, "%s\t%s\t\n", f.Name, r)
		}
	}
	tw.Flush()
}

// printCapacityNotes says why a flavor has no count, and when a count is
// an upper bound.
func printCapacityNotes(w io.Writer, rep *source.ReportBody) {
	first := true
	for _, f := range rep.Flavors {
		lines := f.Notes
		if f.Error != "" {
			lines = append([]string{"not counted: " + f.Error}, lines...)
		}
		for _, l := range lines {
			if first {
				fmt.Fprintln(w, "\nnotes:")
				first = false
			}
			fmt.Fprintf(w, "  %s: %s\n", f.Name, l)
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// heldBack is "n (reason), ..." by reason, or 0.
func heldBack(m map[string]int64) string {
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(m)) {
		if m[r] > 0 {
			parts = append(parts, fmt.Sprintf("%d (%s)", m[r], r))
		}
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}
