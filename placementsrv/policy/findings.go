package policy

import (
	"fmt"
	"slices"

	"github.com/placement-syncd/placement-syncd/placementsrv/release"
)

// Finding is a policy file entry that upstream accepts, at most logging
// it, but that does not do what it says under the release served: a rule
// naming a rule nobody defines (upstream then applies the rule named
// "default", or denies everyone, the admin included), or a rule of the
// other release's rule set, which nothing here consults. Both are the
// marks of a file written for another release. 'serve' refuses to start
// on them unless told to go on; 'policy list' prints them.
type Finding struct {
	File string
	// Line is the line of the rule's name in the file; 0 when unknown.
	Line int
	Rule string
	Msg  string
}

func (f Finding) String() string {
	if f.Line == 0 {
		return fmt.Sprintf("%s: rule %q %s", f.File, f.Rule, f.Msg)
	}
	return fmt.Sprintf("%s:%d: rule %q %s", f.File, f.Line, f.Rule, f.Msg)
}

// other is the release whose rule set a file written for another
// release most likely follows.
func other(rel release.Release) release.Release {
	if rel == release.V8 {
		return release.V15
	}
	return release.V8
}

// registeredIn reports whether release rel registers a rule called name.
func registeredIn(rel release.Release, name string) bool {
	return slices.ContainsFunc(Defaults(rel), func(d Default) bool { return d.Name == name })
}

// undefinedRef is the finding for rule r referring to the undefined rule
// ref, saying which release defines ref when one does.
func undefinedRef(r *Rule, ref string, rel release.Release) Finding {
	msg := fmt.Sprintf("refers to undefined rule %q", ref)
	if o := other(rel); registeredIn(o, ref) {
		msg += fmt.Sprintf(" (a Placement %s rule; api.release is %s)", o, rel)
	}
	return Finding{File: r.file, Line: r.line, Rule: r.Name, Msg: msg}
}

// otherReleaseNames finds the file's rules that only the other release
// registers: under this release nothing consults them.
func otherReleaseNames(file []fileRule, opts Options) []Finding {
	o := other(opts.Release)
	var out []Finding
	for _, fr := range file {
		if registeredIn(opts.Release, fr.name) || !registeredIn(o, fr.name) {
			continue
		}
		out = append(out, Finding{File: opts.File, Line: fr.line, Rule: fr.name,
			Msg: fmt.Sprintf("is a Placement %s rule, which %s does not use (api.release is %s)", o, opts.Release, opts.Release)})
	}
	return out
}
