package placementsrv_test

import (
	"fmt"
	"strings"
	"testing"
)

// probe is an unusual set of noauth2 headers, checked on two requests:
// GET /resource_providers (a rule for admins or readers of the system)
// and GET /usages?project_id=p1 (a rule with the project as target).
// They pin down how headers become credentials, as upstream's noauth2
// middleware and oslo.context make them.
type probe struct {
	name    string
	headers map[string]string
	// want is per mode in modes() order, one character per request.
	want string
}

func probes() []probe {
	return []probe{
		{"roles spaced and cased", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": " Admin , Reader "}, "++ -+ ++ ++"},
		{"empty X-Roles for the admin user", map[string]string{"X-Auth-Token": "admin", "X-Roles": ""}, "-- -- -- --"},
		{"a trailing comma", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader,"}, "-+ -+ -+ -+"},
		{"X-Role is not read", map[string]string{"X-Auth-Token": "u:p1", "X-Role": "admin"}, "-- -- -- --"},
		{"X_Roles with an underscore", map[string]string{"X-Auth-Token": "u:p1", "X_Roles": "admin"}, "++ -- ++ ++"},
		{"system scope other than all", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "admin,reader", "OpenStack-System-Scope": "project"}, "++ -- -- ++"},
		{"empty system scope", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "admin,reader", "OpenStack-System-Scope": ""}, "++ -+ ++ ++"},
		{"system scope drops the token's project", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader", "OpenStack-System-Scope": "all"}, "++ ++ -- --"},
		{"X-Project-Id over the token's project", map[string]string{"X-Auth-Token": "u:p2", "X-Roles": "reader", "X-Project-Id": "p1"}, "-+ -+ -+ -+"},
		{"X-Tenant-Id under system scope", map[string]string{"X-Auth-Token": "u", "X-Roles": "reader", "OpenStack-System-Scope": "all", "X-Tenant-Id": "p1"}, "++ ++ -- -+"},
		{"X-Tenant under system scope", map[string]string{"X-Auth-Token": "u", "X-Roles": "reader", "OpenStack-System-Scope": "all", "X-Tenant": "p1"}, "++ ++ -- -+"},
		{"domain-scoped admin", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "admin,reader", "X-Domain-Id": "d1"}, "++ -- -- ++"},
		{"service roles are not roles", map[string]string{"X-Auth-Token": "u:p1", "X-Service-Roles": "service,admin"}, "-- -- -- --"},
		{"empty token", map[string]string{"X-Auth-Token": ""}, "-- -- -- --"},
		{"X_Auth_Token alone", map[string]string{"X_Auth_Token": "admin"}, "++ -- ++ ++"},
		// Repeated headers are joined: the project is "p1, u:p1".
		{"a token sent twice", map[string]string{"X-Auth-Token": "u:p1", "X_Auth_Token": "u:p1", "X-Roles": "reader"}, "-- -- -- --"},
		{"roles sent twice", map[string]string{"X-Auth-Token": "u:p1", "X-Roles": "reader", "X_Roles": "admin"}, "++ -+ ++ ++"},
		{"the admin user in project p1", map[string]string{"X-Auth-Token": "admin:p1"}, "++ -- ++ ++"},
	}
}

// runProbes sends every probe's two requests to the reference and to
// ours, checks them as the matrix's cells, and returns the reference's
// letters per probe.
func runProbes(t *testing.T, ref, ours *world, mi int) []string {
	t.Helper()
	var seen []string
	for _, p := range probes() {
		want := strings.Fields(p.want)[mi]
		got := make([]byte, 0, 2)
		for i, path := range []string{"/resource_providers", "/usages?project_id=p1"} {
			a, b := ref.sendAs(p.headers, "GET", path, nil), ours.sendAs(p.headers, "GET", path, nil)
			got = append(got, a.letter())
			checkCell(t, "GET "+path+" as probe "+p.name, 200, want[i], a, b)
		}
		seen = append(seen, string(got))
	}
	return seen
}

// formatProbes prints the reference's answers to the probes.
func formatProbes(ms []mode, seen [][]string) string {
	var b strings.Builder
	b.WriteString("probes: GET /resource_providers, GET /usages?project_id=p1\n")
	for pi, p := range probes() {
		fmt.Fprintf(&b, "%-64s", p.name)
		for mi := range ms {
			cell := "?"
			if pi < len(seen[mi]) {
				cell = seen[mi][pi]
			}
			fmt.Fprintf(&b, " %-14s", cell)
		}
		b.WriteString("\n")
	}
	return b.String()
}
