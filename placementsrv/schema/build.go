package schema

import (
	"fmt"
	"math/big"
)

// The Placement schemas are built as value trees, the way upstream writes
// them as dicts: later microversions are derived from earlier ones by deep
// copy and modification, because the resulting key order (kept by object)
// decides which of several errors is reported.

// obj builds an ordered object from key/value pairs, converting Go ints and
// floats to Python-typed numbers and []string to lists.
func obj(kv ...any) *object {
	o := newObject()
	for i := 0; i < len(kv); i += 2 {
		o.set(kv[i].(string), lit(kv[i+1]))
	}
	return o
}

func lit(v any) any {
	switch t := v.(type) {
	case int:
		return &number{i: big.NewInt(int64(t))}
	case float64:
		return floatNum(t)
	case []string:
		l := make([]any, len(t))
		for i, s := range t {
			l[i] = s
		}
		return l
	}
	return v
}

// put is set with Go literals converted as obj does.
func (o *object) put(k string, v any) { o.set(k, lit(v)) }

// at walks nested objects by key, like schema['properties']['x'] in Python.
func at(o *object, keys ...string) *object {
	for _, k := range keys {
		o = o.m[k].(*object)
	}
	return o
}

func clone(o *object) *object { return deepCopy(o).(*object) }

// appendRequired is schema['required'].append/extend.
func appendRequired(o *object, names ...string) {
	old, _ := o.m["required"].([]any)
	l := append([]any(nil), old...)
	for _, n := range names {
		l = append(l, n)
	}
	o.set("required", l)
}

// removeRequired is schema['required'].remove(name).
func removeRequired(o *object, name string) {
	old := o.m["required"].([]any)
	for i, v := range old {
		if v == name {
			l := append(append([]any(nil), old[:i]...), old[i+1:]...)
			o.set("required", l)
			return
		}
	}
}

// mustCompile compiles a built-in schema. It panics only if the built-in
// definitions are broken, which the package tests rule out.
func mustCompile(v *object) *Schema {
	s, err := compileValue(v)
	if err != nil {
		panic(fmt.Sprintf("placement schema does not compile: %v", err))
	}
	return s
}

// mustCompileAll compiles schemas keyed by the microversion minor that
// introduced them.
func mustCompileAll(m map[int]*object) map[int]*Schema {
	out := make(map[int]*Schema, len(m))
	for k, v := range m {
		out[k] = mustCompile(v)
	}
	return out
}

// pick returns the schema introduced at the highest minor not above the
// requested one, or nil when the request predates them all.
func pick(m map[int]*Schema, minor int) *Schema {
	best := -1
	for k := range m {
		if k <= minor && k > best {
			best = k
		}
	}
	if best < 0 {
		return nil
	}
	return m[best]
}
