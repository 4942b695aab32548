package jsonschema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/jsonenc"
)

// The validator works on its own value tree rather than on the caller's Go
// values because Python semantics depend on things Go's decoded form loses:
// dict insertion order (visible in reprs and in which of two equally
// relevant errors wins) and the int/float distinction of JSON numbers.
//
// A value is one of: nil, bool, string, *number, []any (of values) or *Object.

// number is a JSON number with Python's int/float split: literals without a
// fraction or exponent are arbitrary-precision ints, everything else floats.
type number struct {
	i *big.Int // non-nil for ints
	f float64
}

func (n *number) isInt() bool { return n.i != nil }

// Object is a string-keyed map that remembers insertion order like a
// Python dict (re-setting a key keeps its position): a JSON object of a
// document, or a schema being built (see build.go).
type Object struct {
	keys []string
	m    map[string]any
}

func newObject() *Object { return &Object{m: map[string]any{}} }

func (o *Object) set(k string, v any) {
	if _, ok := o.m[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.m[k] = v
}

// Del removes key k, as del schema[k] does in Python.
func (o *Object) Del(k string) {
	if _, ok := o.m[k]; !ok {
		return
	}
	delete(o.m, k)
	for i, kk := range o.keys {
		if kk == k {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

func (o *Object) len() int { return len(o.keys) }

// sortedKeys is the order pprint uses.
func (o *Object) sortedKeys() []string {
	ks := append([]string(nil), o.keys...)
	sort.Strings(ks)
	return ks
}

// deepCopy mirrors Python's copy.deepcopy for the value tree.
func deepCopy(v any) any {
	switch t := v.(type) {
	case *Object:
		c := &Object{keys: append([]string(nil), t.keys...), m: make(map[string]any, len(t.m))}
		for k, vv := range t.m {
			c.m[k] = deepCopy(vv)
		}
		return c
	case []any:
		c := make([]any, len(t))
		for i, vv := range t {
			c[i] = deepCopy(vv)
		}
		return c
	case *number:
		c := *t
		if t.i != nil {
			c.i = new(big.Int).Set(t.i)
		}
		return &c
	default:
		return v
	}
}

func intNum(i int64) *number { return &number{i: big.NewInt(i)} }

func floatNum(f float64) *number { return &number{f: f} }

// parseNumber converts a JSON number literal the way Python's json module
// does: integral literals become exact ints, others floats (overflowing to
// infinity rather than failing).
func parseNumber(s string) (*number, error) {
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("invalid number literal %q", s)
		}
		return &number{i: i}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if !errors.As(err, &ne) || ne.Err != strconv.ErrRange {
			return nil, fmt.Errorf("invalid number literal %q", s)
		}
	}
	return &number{f: f}, nil
}

// fromGo converts a caller-supplied decoded document into a value tree.
// Go maps carry no order, so their keys are taken in sorted order.
func fromGo(v any) (any, error) {
	switch t := v.(type) {
	case nil, bool, string:
		return t, nil
	case json.Number:
		return parseNumber(string(t))
	case float64:
		return floatNum(t), nil
	case float32:
		return floatNum(float64(t)), nil
	case int:
		return intNum(int64(t)), nil
	case int64:
		return intNum(t), nil
	case int32:
		return intNum(int64(t)), nil
	case map[string]any:
		o := newObject()
		for _, k := range sortedMapKeys(t) {
			c, err := fromGo(t[k])
			if err != nil {
				return nil, err
			}
			o.set(k, c)
		}
		return o, nil
	case map[string]string:
		o := newObject()
		for _, k := range sortedMapKeys(t) {
			o.set(k, t[k])
		}
		return o, nil
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			c, err := fromGo(e)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	case []string:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = e
		}
		return l, nil
	default:
		return nil, fmt.Errorf("schema: unsupported instance type %T", v)
	}
}

// fromQuery mirrors dict(req.GET) in webob: one string per key, the last
// value winning when a key repeats.
func fromQuery(q url.Values) *Object {
	o := newObject()
	for _, k := range sortedMapKeys(q) {
		vs := q[k]
		if len(vs) == 0 {
			continue
		}
		o.set(k, vs[len(vs)-1])
	}
	return o
}

// sortedMapKeys stands in for the key order Go maps do not keep.
func sortedMapKeys[M ~map[string]V, V any](m M) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// MaxDepth is the deepest nesting of arrays and objects a document may
// have. API request bodies nest a few levels; the bound keeps decoding,
// validation and error rendering proportional to the body's size instead
// of to size times depth.
const MaxDepth = 64

// ErrTooDeep is returned for a document nested deeper than MaxDepth.
var ErrTooDeep = fmt.Errorf("nesting deeper than %d levels", MaxDepth)

// decodeOrdered parses one JSON document keeping object key order (a
// repeated key keeps its first position and its last value, as a Python
// dict built by json.loads does). It gives up when ctx ends.
func decodeOrdered(ctx context.Context, data []byte) (any, error) {
	d := &decoder{dec: json.NewDecoder(bytes.NewReader(data)), ctx: ctx}
	d.dec.UseNumber()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("invalid character after top-level value")
		}
		return nil, err
	}
	return v, nil
}

// decoder builds the value tree from a token stream.
type decoder struct {
	dec   *json.Decoder
	ctx   context.Context
	steps int
}

// ctxEvery is how many values are decoded between looks at the context.
const ctxEvery = 4096

func (d *decoder) value(depth int) (any, error) {
	if d.steps++; d.steps%ctxEvery == 0 {
		if err := d.ctx.Err(); err != nil {
			return nil, err
		}
	}
	tok, err := d.dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= MaxDepth {
			return nil, ErrTooDeep
		}
		switch t {
		case '{':
			return d.object(depth + 1)
		case '[':
			return d.array(depth + 1)
		default:
			return nil, fmt.Errorf("unexpected delimiter %q", t)
		}
	case json.Number:
		return parseNumber(string(t))
	default:
		return t, nil
	}
}

func (d *decoder) object(depth int) (any, error) {
	o := newObject()
	err := jsonenc.EachMember(d.dec, func(k string) error {
		v, err := d.value(depth)
		if err != nil {
			return err
		}
		o.set(k, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, err
	}
	return o, nil
}

func (d *decoder) array(depth int) (any, error) {
	l := []any{}
	for d.dec.More() {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
	}
	if _, err := d.dec.Token(); err != nil {
		return nil, err
	}
	return l, nil
}

// Python's type predicates as used by the Draft 2020-12 type checker.

func isIntegerValue(v any) bool {
	n, ok := v.(*number)
	if !ok {
		return false
	}
	if n.isInt() {
		return true
	}
	// A float counts as an integer when it is integral (float.is_integer).
	return !math.IsInf(n.f, 0) && !math.IsNaN(n.f) && n.f == math.Trunc(n.f)
}

func isType(v any, typ string) bool {
	switch typ {
	case "object":
		_, ok := v.(*Object)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "integer":
		return isIntegerValue(v)
	case "number":
		_, ok := v.(*number)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "null":
		return v == nil
	}
	return false
}

// cmpNumbers compares exactly, as Python does across int and float. ok is
// false when the values are unordered (NaN).
func cmpNumbers(a, b *number) (c int, ok bool) {
	if a.isInt() && b.isInt() {
		return a.i.Cmp(b.i), true
	}
	if math.IsNaN(a.f) || math.IsNaN(b.f) { // ints keep f at zero
		return 0, false
	}
	return toBigFloat(a).Cmp(toBigFloat(b)), true
}

func toBigFloat(n *number) *big.Float {
	if n.isInt() {
		return new(big.Float).SetInt(n.i)
	}
	return new(big.Float).SetFloat64(n.f)
}

// pyEqual is jsonschema's equal(): Python equality except that booleans
// never equal numbers.
func pyEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case *number:
		y, ok := b.(*number)
		if !ok {
			return false
		}
		c, ok := cmpNumbers(x, y)
		return ok && c == 0
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.len() != y.len() {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.m[k]
			if !ok || !pyEqual(x.m[k], yv) {
				return false
			}
		}
		return true
	}
	return false
}
