package jsonschema

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// node is one compiled (sub)schema. Keywords are kept in the schema's own
// order because jsonschema yields errors in that order and best_match breaks
// ties by taking the first.
type node struct {
	src      *Object // the schema as written, for repr and error tails
	keywords []keyword
	types    []string // value of "type" (nil when absent), for relevance
}

type keyword struct {
	name  string
	value any
	check func(n *node, kw *keyword, inst any) []*vError

	// pre-compiled pieces, depending on the keyword
	sub      *node          // items, additionalProperties (schema form)
	subs     []*node        // anyOf, oneOf
	props    []namedNode    // properties, patternProperties
	re       *regexp.Regexp // pattern
	patAll   *regexp.Regexp // patternProperties joined, for additionalProperties
	strs     []string       // required, type
	num      *number        // minimum, maximum
	count    int            // min/max length/items/properties
	boolean  bool           // uniqueItems, additionalProperties (bool form)
	formatFn func(any) bool // format (nil: passes)
}

// typed adapts a check of the instances of type T (objects, arrays) to a
// keyword check: like jsonschema's, it ignores instances of other types.
func typed[T any](check func(n *node, kw *keyword, v T) []*vError) func(n *node, kw *keyword, inst any) []*vError {
	return func(n *node, kw *keyword, inst any) []*vError {
		v, ok := inst.(T)
		if !ok {
			return nil
		}
		return check(n, kw, v)
	}
}

type namedNode struct {
	name string
	re   *regexp.Regexp // patternProperties only
	node *node
}

// keywordCompiler prepares one keyword of node n: it sets kw.check and
// whatever pre-compiled pieces that check needs.
type keywordCompiler func(n *node, kw *keyword) error

// compile turns a schema value into a node tree, rejecting keyword values
// that are malformed, so that validation itself cannot fail.
func compile(v any) (*node, error) {
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("schema must be an object, got %s", pyRepr(v, false))
	}
	n := &node{src: o}
	for _, name := range o.keys {
		c := compilerFor(name)
		if c == nil {
			continue // annotations and unknown keywords are ignored, as upstream
		}
		kw := keyword{name: name, value: o.m[name]}
		if err := c(n, &kw); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		n.keywords = append(n.keywords, kw)
	}
	return n, nil
}

// compilerFor returns the compiler of a keyword, or nil for a keyword that
// does not affect validation.
func compilerFor(name string) keywordCompiler {
	switch name {
	case "type":
		return compileType
	case "properties", "patternProperties":
		return compileProperties
	case "additionalProperties":
		return compileAdditionalProperties
	case "required":
		return compileRequired
	case "items":
		return compileItems
	case "anyOf", "oneOf":
		return compileSubschemas
	case "minimum", "maximum":
		return compileBound
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		return compileCount
	case "uniqueItems":
		return compileUniqueItems
	case "pattern":
		return compilePatternKeyword
	case "enum":
		return compileEnum
	case "format":
		return compileFormat
	case "$ref", "$defs", "definitions", "allOf", "not", "if", "const",
		"contains", "prefixItems", "dependentRequired", "dependentSchemas",
		"propertyNames", "multipleOf", "exclusiveMinimum", "exclusiveMaximum",
		"unevaluatedItems", "unevaluatedProperties", "additionalItems", "$dynamicRef":
		return rejectKeyword
	}
	return nil
}

func rejectKeyword(*node, *keyword) error {
	return errors.New("keyword not supported by this validator")
}

func compileType(n *node, kw *keyword) error {
	kw.check = checkType
	var err error
	switch t := kw.value.(type) {
	case string:
		kw.strs = []string{t}
	case []any:
		kw.strs, err = stringList(t)
	default:
		err = errors.New("bad type value")
	}
	n.types = kw.strs
	return err
}

func compileProperties(_ *node, kw *keyword) error {
	kw.check = typed(checkProperties)
	var err error
	kw.props, err = compileProps(kw.value, kw.name == "patternProperties")
	return err
}

func compileAdditionalProperties(n *node, kw *keyword) error {
	kw.check = typed(checkAdditionalProperties)
	if pp, ok := n.src.m["patternProperties"].(*Object); ok && pp.len() > 0 {
		var err error
		if kw.patAll, err = compilePattern(strings.Join(pp.keys, "|")); err != nil {
			return err
		}
	}
	if b, ok := kw.value.(bool); ok {
		kw.boolean = b
		return nil
	}
	var err error
	kw.sub, err = compile(kw.value)
	return err
}

func compileRequired(_ *node, kw *keyword) error {
	kw.check = typed(checkRequired)
	var err error
	kw.strs, err = valueAs(kw, stringList)
	return err
}

func compileItems(_ *node, kw *keyword) error {
	kw.check = typed(checkItems)
	var err error
	kw.sub, err = compile(kw.value)
	return err
}

func compileSubschemas(_ *node, kw *keyword) error {
	kw.check = checkAnyOf
	if kw.name == "oneOf" {
		kw.check = checkOneOf
	}
	l, ok := kw.value.([]any)
	if !ok || len(l) == 0 {
		return fmt.Errorf("bad %s value", kw.name)
	}
	for _, s := range l {
		c, err := compile(s)
		if err != nil {
			return err
		}
		kw.subs = append(kw.subs, c)
	}
	return nil
}

func compileBound(_ *node, kw *keyword) error {
	kw.check = checkMinimum
	if kw.name == "maximum" {
		kw.check = checkMaximum
	}
	var err error
	kw.num, err = valueOf[*number](kw)
	return err
}

func compileCount(_ *node, kw *keyword) error {
	kw.check = countChecker(kw.name)
	if !isIntegerValue(kw.value) {
		return fmt.Errorf("bad %s value", kw.name)
	}
	kw.count = int(toInt64(kw.value.(*number)))
	return nil
}

func compileUniqueItems(_ *node, kw *keyword) error {
	kw.check = checkUniqueItems
	kw.boolean, _ = kw.value.(bool)
	return nil
}

func compilePatternKeyword(_ *node, kw *keyword) error {
	kw.check = checkPattern
	var err error
	kw.re, err = valueAs(kw, compilePattern)
	return err
}

func compileEnum(_ *node, kw *keyword) error {
	kw.check = checkEnum
	_, err := valueOf[[]any](kw)
	return err
}

func compileFormat(_ *node, kw *keyword) error {
	kw.check = checkFormat // its check is set by applyFormats
	return nil
}

// valueOf is the keyword's value as a T, or an error naming the keyword.
func valueOf[T any](kw *keyword) (T, error) {
	v, ok := kw.value.(T)
	if !ok {
		return v, fmt.Errorf("bad %s value", kw.name)
	}
	return v, nil
}

// valueAs is the keyword's value as a T (see valueOf), converted by conv.
func valueAs[T, R any](kw *keyword, conv func(T) (R, error)) (R, error) {
	v, err := valueOf[T](kw)
	if err != nil {
		var none R
		return none, err
	}
	return conv(v)
}

func toInt64(n *number) int64 {
	if n.isInt() {
		if !n.i.IsInt64() {
			if n.i.Sign() < 0 {
				return -1 << 62
			}
			return 1 << 62
		}
		return n.i.Int64()
	}
	return int64(n.f)
}

func stringList(l []any) ([]string, error) {
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("expected strings, got %s", pyRepr(e, false))
		}
		out[i] = s
	}
	return out, nil
}

func compileProps(v any, patterns bool) ([]namedNode, error) {
	o, ok := v.(*Object)
	if !ok {
		return nil, errors.New("expected an object")
	}
	var out []namedNode
	for _, k := range o.keys {
		c, err := compile(o.m[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		nn := namedNode{name: k, node: c}
		if patterns {
			if nn.re, err = compilePattern(k); err != nil {
				return nil, err
			}
		}
		out = append(out, nn)
	}
	return out, nil
}
