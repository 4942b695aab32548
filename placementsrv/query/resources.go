package query

import (
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// Resource is one requested amount of a resource class.
type Resource struct {
	Class  string
	Amount int64
}

// ParseResources parses "RC:N,RC:N" into amounts in first-seen order; a
// repeated class keeps its first position and its last amount, like the
// Python dict upstream builds.
func ParseResources(qs string) ([]Resource, *apierror.Error) {
	if PyStrip(qs) == "" {
		return nil, apierror.BadRequest("Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.")
	}
	var out []Resource
	for _, rt := range strings.Split(qs, ",") {
		name, amount, ok := strings.Cut(rt, ":")
		if !ok || strings.Contains(amount, ":") {
			return nil, apierror.BadRequest("Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: %s.", rt)
		}
		n, ok := PyIntLiteral(amount)
		if !ok {
			return nil, apierror.BadRequest("Requested resource %s expected positive integer amount. Got: %s.", name, amount)
		}
		if n < 1 {
			return nil, apierror.BadRequest("Requested resource %s requires amount >= 1. Got: %d.", name, n)
		}
		found := false
		for i := range out {
			if out[i].Class == name {
				out[i].Amount, found = n, true
				break
			}
		}
		if !found {
			out = append(out, Resource{Class: name, Amount: n})
		}
	}
	return out, nil
}
