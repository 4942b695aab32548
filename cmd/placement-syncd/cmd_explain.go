package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/assemble"
	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/handlers"
)

// explainPath is the daemon's explain route (admin only, not Placement's).
const explainPath = "/_placement-syncd/explain/allocation_candidates"

// cmdExplain asks the running daemon why an allocation candidates query
// gets the candidates it gets (or none) and prints the answer as tables.
// It goes through the daemon, not the database: the daemon's read model
// is what answered the scheduler, and only the daemon knows whether the
// OWNER_NOVA pre-filter is on (it follows the gate).
func cmdExplain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, common := newConfigFlagSet("explain", "placement-syncd explain '<allocation candidates query>' [--microversion "+microversion.Max.String()+"] [--config FILE] [--url URL] [--token TOKEN] [--user ID] [--misses N] [--json]", stderr, configSpec{noDB: true})
	mv := fs.String("microversion", "", "Placement microversion to explain the query at ("+microversion.AllocationCandidates.String()+" to "+microversion.Max.String()+
		", or latest; default: api.max_microversion, or "+microversion.Max.String()+" with --url)")
	base := fs.String("url", "", "the daemon's base URL (default: http:// and api.listen)")
	token := fs.String("token", "", "X-Auth-Token of an admin (default: reconciler.placement.token, \"admin\" under noauth2)")
	user := fs.String("user", "", "apply the OWNER_NOVA pre-filter as for this user id (default: the first of reconciler.scheduler_users)")
	misses := fs.Int("misses", 5, "nearest misses to list")
	asJSON := fs.Bool("json", false, "print the daemon's JSON answer")
	words, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(words) != 1 {
		return usageError{errors.New("explain: want exactly one query string, e.g. 'resources=VCPU:4,MEMORY_MB:8192'")}
	}
	if _, err := explainMicroversion(*mv, microversion.Max, "this binary"); err != nil {
		return err
	}
	cfg, _, err := common.load()
	if err != nil {
		return err
	}
	// The daemon of the configuration speaks up to api.max_microversion;
	// another one (--url) is not known here and answers for itself.
	limit, limitBy := cfg.API.MaxMicroversionValue(), "api.max_microversion"
	if *base == "" {
		*base = assemble.LocalURL(cfg.API.Listen)
	} else {
		limit, limitBy = microversion.Max, "this binary"
	}
	if *mv, err = explainMicroversion(*mv, limit, limitBy); err != nil {
		return err
	}
	if *token == "" {
		*token = cfg.Reconciler.Placement.Token
	}
	raw, err := explainQuery(words[0], *user, *misses)
	if err != nil {
		return usageError{err}
	}
	body, err := daemonGet(ctx, "explain", strings.TrimSuffix(*base, "/")+explainPath+"?"+raw, *token, *mv)
	if err != nil {
		return err
	}
	if *asJSON {
		_, err := stdout.Write(append(body, '\n'))
		return err
	}
	var ex handlers.ExplainBody
	if err := json.Unmarshal(body, &ex); err != nil {
		return fmt.Errorf("explain: decode the daemon's answer: %w", err)
	}
	printExplain(stdout, &ex)
	return nil
}

// explainMicroversion checks --microversion before any request, as the
// daemon would: the explain route answers GET /allocation_candidates,
// which exists from 1.10 (below, the daemon answers 404), up to limit
// (above, 406). Empty is limit; latest is sent as is.
func explainMicroversion(flagValue string, limit microversion.Version, limitBy string) (string, error) {
	if flagValue == "" {
		return limit.String(), nil
	}
	if flagValue == "latest" {
		return flagValue, nil
	}
	v, err := microversion.Parse(flagValue)
	if err != nil {
		return "", usageError{fmt.Errorf("explain: --microversion: %w; want %s to %s, or latest", err, microversion.AllocationCandidates, limit)}
	}
	if v.Less(microversion.AllocationCandidates) || limit.Less(v) {
		return "", usageError{fmt.Errorf("explain: --microversion %s: allocation candidates are explained at microversions %s to %s (the highest set by %s), or latest",
			flagValue, microversion.AllocationCandidates, limit, limitBy)}
	}
	return v.String(), nil
}

// explainQuery is the query to send: the operator's, with the explain
// parameters added. A leading "?" or a whole /allocation_candidates URL
// pasted from a log is accepted.
func explainQuery(q, user string, misses int) (string, error) {
	if i := strings.Index(q, "?"); i >= 0 {
		q = q[i+1:]
	}
	if strings.TrimSpace(q) == "" {
		return "", errors.New("explain: empty query")
	}
	if misses < 0 {
		return "", fmt.Errorf("explain: --misses %d: want 0 or more", misses)
	}
	q += "&explain_misses=" + strconv.Itoa(misses)
	if user != "" {
		q += "&explain_user=" + url.QueryEscape(user)
	}
	return q, nil
}

// daemonGet GETs one of the daemon's own routes for command cmd and
// returns the body of a 200; any other status is an error quoting
// Placement's error detail.
func daemonGet(ctx context.Context, cmd, u, token, mv string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	req.Header.Set("OpenStack-API-Version", "placement "+mv)
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: is the daemon running? %w", cmd, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: read the answer: %w", cmd, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Errors []struct{ Detail string } `json:"errors"`
		}
		detail := strings.TrimSpace(string(body))
		if json.Unmarshal(body, &e) == nil && len(e.Errors) > 0 {
			// Placement's details span lines; one line reads better here.
			detail = strings.Join(strings.Fields(e.Errors[0].Detail), " ")
		}
		return nil, fmt.Errorf("%s: %s: %s", cmd, resp.Status, detail)
	}
	return body, nil
}

// printExplain prints ex as a few tables.
func printExplain(w io.Writer, ex *handlers.ExplainBody) {
	pre := "not applied"
	if ex.Prefilter {
		pre = "applied as for " + ex.PrefilterUser
	}
	fmt.Fprintf(w, "query: %s\nmicroversion: %s   OWNER_NOVA pre-filter: %s\n", ex.Query, ex.Microversion, pre)
	fmt.Fprintf(w, "candidates: %d returned, %d generated\n\n", ex.Returned, ex.Generated)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROOTS\tREMOVED\tLEFT\t")
	for _, st := range ex.Stages {
		fmt.Fprintf(tw, "%s\t%d\t%d%s\t\n", stageName(st.Name, st.Prefilter), st.Removed, st.Left, unit(st.Unit))
	}
	tw.Flush()
	for _, g := range ex.Groups {
		fmt.Fprintf(w, "\ngroup %s: %d providers\n", g.Group, g.Providers)
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		if len(g.Stages) > 0 {
			fmt.Fprintln(tw, "  FILTER\tREMOVED\tLEFT\t")
			for _, st := range g.Stages {
				fmt.Fprintf(tw, "  %s\t%d\t%d\t\n", stageName(st.Name, st.Prefilter), st.Removed, st.Left)
			}
			if g.Stages[len(g.Stages)-1].Left == 0 {
				tw.Flush()
				continue // no provider left to count the classes on
			}
		}
		fmt.Fprintln(tw, "  CLASS\tWITH\tHELD BACK\tNO ROOM\tFIT\tSHARING\t")
		for _, c := range g.Classes {
			fmt.Fprintf(tw, "  %s:%d\t%d\t%d\t%d\t%d\t%d\t\n", c.Class, c.Amount, c.With, c.HeldBack, c.NoFit, c.Fit, c.Sharing)
		}
		tw.Flush()
	}
	if len(ex.Misses) > 0 {
		fmt.Fprintln(w, "\nnearest misses:")
		for _, m := range ex.Misses {
			if m.Root == m.UUID {
				fmt.Fprintf(w, "  %s\n", m.Root)
			} else {
				fmt.Fprintf(w, "  %s (%s)\n", m.Root, m.UUID)
			}
			for _, r := range m.Reasons {
				fmt.Fprintf(w, "    - %s\n", r)
			}
		}
	}
	fmt.Fprintln(w, "\nwhy:")
	for _, line := range ex.Why {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

func stageName(name string, prefilter bool) string {
	if prefilter {
		return name + " [OWNER_NOVA pre-filter]"
	}
	return name
}

func unit(u string) string {
	if u == "" {
		return ""
	}
	return " " + u
}
