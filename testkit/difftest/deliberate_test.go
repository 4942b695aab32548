package difftest

import "testing"

// TestDeliberateIsNarrow: only the documented differences are set apart;
// the same answers with anything else different stay mismatches.
func TestDeliberateIsNarrow(t *testing.T) {
	const path = "/resource_providers/1377ab6e-6469-4152-af17-4deda69b61a2/inventories"
	conflict := func(detail string) *Answer {
		return answer(409, `{"errors": [{"status": 409, "title": "Conflict", "detail": "There was a conflict.\n\n `+detail+`", "code": "placement.concurrent_update"}]}`)
	}
	ref := conflict(`Update conflict: (sqlite3.IntegrityError) UNIQUE constraint failed: inventories.resource_provider_id, inventories.resource_class_id [SQL: INSERT INTO inventories ...] [parameters: ('2026-11-24 21:07:20.199214', 10, 2, 16, 6, 1, 2147483647, 1, 1.0)]`)
	ours := conflict(`Update conflict: UNIQUE constraint failed: inventories.resource_provider_id, inventories.resource_class_id`)
	for _, tc := range []struct {
		name, method, path string
		ref, ours          *Answer
		want               string
	}{
		{"duplicate inventory", "POST", path, ref, ours, "duplicate inventory 409 detail"},
		{"other route", "POST", "/resource_providers", ref, ours, ""},
		{"other detail", "POST", path, ref, conflict("Update conflict: something else"), ""},
		{"other code too", "POST", path, ref, answer(409, `{"errors": [{"status": 409, "title": "Conflict", "detail": "There was a conflict.\n\n Update conflict: UNIQUE constraint failed: inventories.x", "code": "placement.undefined_code"}]}`), ""},
		{"reference crashed", "PUT", path, answer(500, `{}`), answer(400, `{}`), "reference 5xx"},
		{"ours crashed", "PUT", path, answer(500, `{}`), answer(500, `{}`), ""},
	} {
		diffs := Compare(tc.path, tc.ref, tc.ours, nil)
		if got := Deliberate(tc.method, tc.path, tc.ref, tc.ours, diffs); got != tc.want {
			t.Errorf("%s: Deliberate = %q, want %q (diffs %v)", tc.name, got, tc.want, diffs)
		}
	}
}
