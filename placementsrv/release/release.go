// Package release names the upstream Placement releases whose behaviour
// the server can follow. Placement added no microversion after 1.39, but
// its policy defaults (9.0.0) and a few rules (the over-capacity rule of
// bug 2104040, uuid validation of in_tree) changed; a cloud adopting this
// server picks the release it runs today, so that its clients see the
// same answers and the same 403s.
package release

import (
	"fmt"
	"strings"
)

// Release is an upstream Placement release. The zero value is the newest,
// which is the default.
type Release uint8

const (
	// V15 is Placement 15.0.0 (2026.1): project-scoped admin and service
	// policy defaults, the no-worse over-capacity rule, stricter uuids.
	V15 Release = iota
	// V8 is Placement 8.0.0 (2022.2, Debian 12's): system-scoped policy
	// defaults and the strict capacity check.
	V8
)

// Default is the release a configuration that names none follows.
const Default = V15

var names = map[Release]string{V15: "15.0.0", V8: "8.0.0"}

// Names lists the accepted spellings, newest first.
func Names() []string { return []string{names[V15], names[V8]} }

// Parse reads a release's version number as the configuration spells it.
func Parse(s string) (Release, error) {
	for r, n := range names {
		if s == n {
			return r, nil
		}
	}
	return Default, fmt.Errorf("unknown Placement release %q (one of %s)", s, strings.Join(Names(), ", "))
}

// String is the release's version number.
func (r Release) String() string {
	if n, ok := names[r]; ok {
		return n
	}
	return fmt.Sprintf("Release(%d)", uint8(r))
}

// EnforceDefaults are oslo.policy's defaults for enforce_scope and
// enforce_new_defaults in the release's requirements: both on since
// oslo.policy 4.4 (required by 15.0.0), both off before.
func (r Release) EnforceDefaults() (scope, newDefaults bool) {
	return r == V15, r == V15
}
