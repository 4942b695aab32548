// Package standard lists the standard trait and resource class names
// (os-traits 2.9.0, os-resource-classes 1.1.0) that every store holds from
// first start and that cannot be deleted.
package standard

import (
	_ "embed"
	"strings"
)

//go:embed os-traits-2.9.0.txt
var traitsText string

//go:embed os-resource-classes-1.1.0.txt
var classesText string

// Traits returns the standard trait names in file order.
func Traits() []string { return lines(traitsText) }

// ResourceClasses returns the standard resource class names; a class's
// index is its id, as in Placement.
func ResourceClasses() []string { return lines(classesText) }

// CustomPrefix starts every non-standard trait and resource class name.
const CustomPrefix = "CUSTOM_"

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
