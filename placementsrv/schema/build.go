package schema

import (
	"fmt"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/jsonschema"
)

// The Placement schemas are built as value trees, the way upstream writes
// them as dicts: later microversions are derived from earlier ones by deep
// copy and modification (jsonschema.Object's Clone, Put, ...), because the
// resulting key order decides which of several errors is reported.

// object is a schema under construction.
type object = jsonschema.Object

// obj is jsonschema.Obj, short as the schemas use it on every line.
func obj(kv ...any) *object { return jsonschema.Obj(kv...) }

// mustCompile compiles a built-in schema with Placement's format checks.
// It panics only if the built-in definitions are broken, which the
// package tests rule out.
func mustCompile(v *object) *jsonschema.Schema { return mustCompileWith(v, formats()) }

func mustCompileWith(v *object, f jsonschema.Formats) *jsonschema.Schema {
	s, err := jsonschema.CompileObject(v, f)
	if err != nil {
		panic(fmt.Sprintf("placement schema does not compile: %v", err))
	}
	return s
}

// byVersion is a schema's variants keyed by the microversion that
// introduced each.
type byVersion map[microversion.Version]*jsonschema.Schema

// mustCompileAll compiles the variants of a schema, each keyed by the
// microversion that introduced it, with formats f.
func mustCompileAll(m map[microversion.Version]*object, f jsonschema.Formats) byVersion {
	out := make(byVersion, len(m))
	for k, v := range m {
		out[k] = mustCompileWith(v, f)
	}
	return out
}

// at returns the variant introduced at the highest microversion not above
// v, or nil when v predates them all.
func (b byVersion) at(v microversion.Version) *jsonschema.Schema {
	var best *jsonschema.Schema
	var bestAt microversion.Version
	for k, s := range b {
		if v.AtLeast(k) && (best == nil || k.AtLeast(bestAt)) {
			best, bestAt = s, k
		}
	}
	return best
}
