package query

import (
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// This file parses request-wide parameters of GET /allocation_candidates
// (upstream's RequestWideParams); root_required is in traits.go.

// ParseLimit parses limit: any integer strconv.Atoi takes.
func ParseLimit(v string) (int, *apierror.Error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, apierror.BadRequest("Invalid query string parameters: %s is not a valid limit", v)
	}
	return n, nil
}

// ParseSameSubtree parses one same_subtree value: comma-separated group
// suffixes, each stripped, none empty, duplicates dropped.
func ParseSameSubtree(v string) ([]string, *apierror.Error) {
	var set []string
	for _, suf := range strings.Split(v, ",") {
		suf = PyStrip(suf)
		if suf == "" {
			return nil, apierror.Codedf(400, apierror.CodeQueryBadValue, "Empty string (unsuffixed group) can not be specified in `same_subtree` ")
		}
		set = AppendUnique(set, suf)
	}
	return set, nil
}
