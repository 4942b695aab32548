package jsonschema

import "math/big"

// Schemas are built as value trees, the way Python code writes them as
// dicts: a later variant is derived from an earlier one by deep copy and
// modification, because the resulting key order (which Object keeps)
// decides which of several errors is reported.

// Obj builds an ordered object from key/value pairs, converting Go ints
// and floats to Python-typed numbers and []string to lists.
func Obj(kv ...any) *Object {
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

// Put sets key k, converting Go literals as Obj does; a key set again
// keeps its position.
func (o *Object) Put(k string, v any) { o.set(k, lit(v)) }

// At walks nested objects by key, like schema['properties']['x'] in
// Python. It panics when a key is missing or not an object, which only a
// broken built-in schema can cause.
func (o *Object) At(keys ...string) *Object {
	for _, k := range keys {
		o = o.m[k].(*Object)
	}
	return o
}

// Clone is copy.deepcopy(o).
func (o *Object) Clone() *Object { return deepCopy(o).(*Object) }

// AppendRequired is schema['required'].extend(names).
func (o *Object) AppendRequired(names ...string) {
	old, _ := o.m["required"].([]any)
	l := append([]any(nil), old...)
	for _, n := range names {
		l = append(l, n)
	}
	o.set("required", l)
}

// RemoveRequired is schema['required'].remove(name).
func (o *Object) RemoveRequired(name string) {
	old := o.m["required"].([]any)
	for i, v := range old {
		if v == name {
			l := append(append([]any(nil), old[:i]...), old[i+1:]...)
			o.set("required", l)
			return
		}
	}
}
