package policy

import (
	"slices"
	"testing"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// An 8.0.0-era policy file, as an operator of Placement 8.0.0 wrote it.
const file8 = `# kept from Placement 8.0.0
"placement:resource_providers:list": "rule:system_reader_api"
"system_reader_api": "role:reader and system_scope:all"
"placement:traits:list": "rule:system_admin_api"
"extra": "rule:missing"
`

// A 15.0.0-era one.
const file15 = `{
  "placement:resource_providers:list": "rule:admin_or_service_api",
  "admin_or_service_api": "role:admin or role:service"
}
`

func findingStrings(t *testing.T, data string, rel release.Release) []string {
	t.Helper()
	enf, err := NewFromBytes("policy.yaml", []byte(data), Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range enf.Findings {
		out = append(out, f.String())
	}
	return out
}

// TestFindings: references to undefined rules and rules of the other
// release are found, each with its file, line and rule, in file order.
func TestFindings(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		rel  release.Release
		want []string
	}{
		{"8.0.0 file under 15.0.0", file8, release.V15, []string{
			// system_reader_api is defined by the file itself: it resolves,
			// but nothing under 15.0.0 uses it.
			`policy.yaml:3: rule "system_reader_api" is a Placement 8.0.0 rule, which 15.0.0 does not use (api.release is 15.0.0)`,
			`policy.yaml:4: rule "placement:traits:list" refers to undefined rule "system_admin_api" (a Placement 8.0.0 rule; api.release is 15.0.0)`,
			`policy.yaml:5: rule "extra" refers to undefined rule "missing"`,
		}},
		{"8.0.0 file under 8.0.0", file8, release.V8, []string{
			`policy.yaml:5: rule "extra" refers to undefined rule "missing"`,
		}},
		{"15.0.0 file under 8.0.0", file15, release.V8, []string{
			`policy.yaml:3: rule "admin_or_service_api" is a Placement 15.0.0 rule, which 8.0.0 does not use (api.release is 8.0.0)`,
		}},
		{"15.0.0 file under 15.0.0", file15, release.V15, nil},
		{"JSON undefined", "{\n\n  \"placement:usages\": \"rule:system_or_project_reader\"\n}\n", release.V15, []string{
			`policy.yaml:3: rule "placement:usages" refers to undefined rule "system_or_project_reader" (a Placement 8.0.0 rule; api.release is 15.0.0)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := findingStrings(t, tc.data, tc.rel); !slices.Equal(got, tc.want) {
				t.Errorf("findings:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}
