package difftest

import (
	"encoding/json"
	"strings"
)

// refCrash is the name of the reference's own 5xx among the documented
// differences.
const refCrash = "reference 5xx"

// Deliberate names the documented difference an answer pair shows, or "".
// Each is a row of placementsrv/candidates/DESIGN.md ("Deliberately
// different"); the runner counts them apart from mismatches and the
// report prints them, so none goes unseen. They are keyed narrowly: any
// other difference in the same answer is still a mismatch.
func Deliberate(method, path string, ref, ours *Answer, diffs []Diff) string {
	switch {
	case ref.Status >= 500 && ours.Status < 500:
		// The reference crashed ('int' object is not iterable, a
		// KeyError); ours answers instead of crashing too.
		return refCrash
	case method == "POST" && RouteTemplate(path) == "/resource_providers/{uuid}/inventories" &&
		ref.Status == 409 && ours.Status == 409 && onlyDetails(diffs) &&
		strings.Contains(errorDetail(ref), "Update conflict: (sqlite3.IntegrityError) UNIQUE constraint failed: inventories.") &&
		strings.Contains(errorDetail(ours), "Update conflict: UNIQUE constraint failed: inventories."):
		// SQLAlchemy's text, its SQL and the reference database's row ids.
		return "duplicate inventory 409 detail"
	}
	return ""
}

func onlyDetails(diffs []Diff) bool {
	for _, d := range diffs {
		if !strings.HasPrefix(d.Class(), "body $.errors[*].detail") {
			return false
		}
	}
	return len(diffs) > 0
}

func errorDetail(a *Answer) string {
	var body struct {
		Errors []struct {
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if json.Unmarshal(a.Body, &body) != nil || len(body.Errors) == 0 {
		return ""
	}
	return body.Errors[0].Detail
}
