package schema

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// node is one compiled (sub)schema. Keywords are kept in the schema's own
// order because jsonschema yields errors in that order and best_match breaks
// ties by taking the first.
type node struct {
	src      *object // the schema as written, for repr and error tails
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
	formatFn func(any) bool // format
}

type namedNode struct {
	name string
	re   *regexp.Regexp // patternProperties only
	node *node
}

// vError is jsonschema's ValidationError before selection: paths are
// relative to the parent error (for anyOf/oneOf context errors) or to the
// document root.
type vError struct {
	message    string
	keyword    string
	path       []any // string keys and int indices
	schemaPath []any
	instance   any
	schema     *node
	context    []*vError
}

// compile turns a schema value into a node tree, rejecting keyword values
// that are malformed, so that validation itself cannot fail.
func compile(v any) (*node, error) {
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("schema must be an object, got %s", pyRepr(v, false))
	}
	n := &node{src: o}
	patternProps, _ := o.get("patternProperties")
	for _, name := range o.keys {
		val := o.m[name]
		kw := keyword{name: name, value: val}
		var err error
		switch name {
		case "type":
			kw.check = checkType
			switch t := val.(type) {
			case string:
				kw.strs = []string{t}
			case []any:
				kw.strs, err = stringList(t)
			default:
				err = fmt.Errorf("bad type value")
			}
			n.types = kw.strs
		case "properties":
			kw.check = checkProperties
			kw.props, err = compileProps(val, false)
		case "patternProperties":
			kw.check = checkPatternProperties
			kw.props, err = compileProps(val, true)
		case "additionalProperties":
			kw.check = checkAdditionalProperties
			if pp, ok := patternProps.(*object); ok && pp.len() > 0 {
				kw.patAll, err = compilePattern(strings.Join(pp.keys, "|"))
			}
			if b, ok := val.(bool); ok {
				kw.boolean = b
			} else if err == nil {
				kw.sub, err = compile(val)
			}
		case "required":
			kw.check = checkRequired
			l, ok := val.([]any)
			if !ok {
				err = fmt.Errorf("bad required value")
			} else {
				kw.strs, err = stringList(l)
			}
		case "items":
			kw.check = checkItems
			kw.sub, err = compile(val)
		case "anyOf", "oneOf":
			kw.check = checkAnyOf
			if name == "oneOf" {
				kw.check = checkOneOf
			}
			l, ok := val.([]any)
			if !ok || len(l) == 0 {
				err = fmt.Errorf("bad %s value", name)
			}
			for _, s := range l {
				var c *node
				if c, err = compile(s); err != nil {
					break
				}
				kw.subs = append(kw.subs, c)
			}
		case "minimum", "maximum":
			kw.check = checkMinimum
			if name == "maximum" {
				kw.check = checkMaximum
			}
			var ok bool
			if kw.num, ok = val.(*number); !ok {
				err = fmt.Errorf("bad %s value", name)
			}
		case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
			kw.check = countChecker(name)
			if !isIntegerValue(val) {
				err = fmt.Errorf("bad %s value", name)
			} else {
				kw.count = int(toInt64(val.(*number)))
			}
		case "uniqueItems":
			kw.check = checkUniqueItems
			kw.boolean, _ = val.(bool)
		case "pattern":
			kw.check = checkPattern
			s, ok := val.(string)
			if !ok {
				err = fmt.Errorf("bad pattern value")
			} else {
				kw.re, err = compilePattern(s)
			}
		case "enum":
			kw.check = checkEnum
			if _, ok := val.([]any); !ok {
				err = fmt.Errorf("bad enum value")
			}
		case "format":
			kw.check = checkFormat
			s, _ := val.(string)
			kw.formatFn = formatChecker(s) // unknown formats always pass
		case "$ref", "$defs", "definitions", "allOf", "not", "if", "const",
			"contains", "prefixItems", "dependentRequired", "dependentSchemas",
			"propertyNames", "multipleOf", "exclusiveMinimum", "exclusiveMaximum",
			"unevaluatedItems", "unevaluatedProperties", "additionalItems", "$dynamicRef":
			err = fmt.Errorf("keyword not supported by this validator")
		default:
			continue // annotations and unknown keywords are ignored, as upstream
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		n.keywords = append(n.keywords, kw)
	}
	return n, nil
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
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("expected an object")
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

// compilePattern translates the Python regular expression subset used by
// Placement to RE2. Python's "$" (outside MULTILINE) also matches before a
// final newline, so "abc\n" matches "^abc$"; RE2's "$" does not, hence the
// rewrite. Patterns are applied unanchored, like re.search.
func compilePattern(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			b.WriteByte(p[i+1])
			i++
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// A leading "]" (or "^]") is literal inside a class.
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
			continue
		case c == '$':
			b.WriteString(`(?:\n?\z)`)
			continue
		}
		b.WriteByte(c)
	}
	return regexp.Compile(b.String())
}

// iterErrors is Validator.iter_errors: every error, in schema keyword order.
func (n *node) iterErrors(inst any) []*vError {
	var out []*vError
	for i := range n.keywords {
		kw := &n.keywords[i]
		for _, e := range kw.check(n, kw, inst) {
			if e.keyword == "" {
				e.keyword = kw.name
				e.instance = inst
				e.schema = n
			}
			e.schemaPath = append([]any{kw.name}, e.schemaPath...)
			out = append(out, e)
		}
	}
	return out
}

func (n *node) isValid(inst any) bool {
	for i := range n.keywords {
		kw := &n.keywords[i]
		if len(kw.check(n, kw, inst)) > 0 {
			return false
		}
	}
	return true
}

// descend is Validator.descend: errors of a subschema with the instance
// and schema path segments prepended.
func descend(sub *node, inst any, path any, schemaPath any) []*vError {
	errs := sub.iterErrors(inst)
	for _, e := range errs {
		if path != nil {
			e.path = append([]any{path}, e.path...)
		}
		if schemaPath != nil {
			e.schemaPath = append([]any{schemaPath}, e.schemaPath...)
		}
	}
	return errs
}

func newErr(format string, args ...any) []*vError {
	return []*vError{{message: fmt.Sprintf(format, args...)}}
}

func checkType(_ *node, kw *keyword, inst any) []*vError {
	for _, t := range kw.strs {
		if isType(inst, t) {
			return nil
		}
	}
	reprs := make([]string, len(kw.strs))
	for i, t := range kw.strs {
		reprs[i] = strRepr(t)
	}
	return newErr("%s is not of type %s", pyRepr(inst, false), strings.Join(reprs, ", "))
}

func checkProperties(_ *node, kw *keyword, inst any) []*vError {
	o, ok := inst.(*object)
	if !ok {
		return nil
	}
	var out []*vError
	for _, p := range kw.props {
		if v, ok := o.m[p.name]; ok {
			out = append(out, descend(p.node, v, p.name, p.name)...)
		}
	}
	return out
}

func checkPatternProperties(_ *node, kw *keyword, inst any) []*vError {
	o, ok := inst.(*object)
	if !ok {
		return nil
	}
	var out []*vError
	for _, p := range kw.props {
		for _, k := range o.keys {
			if p.re.MatchString(k) {
				out = append(out, descend(p.node, o.m[k], k, p.name)...)
			}
		}
	}
	return out
}

func checkAdditionalProperties(n *node, kw *keyword, inst any) []*vError {
	o, ok := inst.(*object)
	if !ok {
		return nil
	}
	var props []namedNode
	for _, k := range n.keywords {
		if k.name == "properties" {
			props = k.props
		}
	}
	var extras []string
	for _, k := range o.keys {
		known := false
		for _, p := range props {
			if p.name == k {
				known = true
				break
			}
		}
		if known || (kw.patAll != nil && kw.patAll.MatchString(k)) {
			continue
		}
		extras = append(extras, k)
	}
	if kw.sub != nil {
		// Upstream iterates a set here, so its order is arbitrary; sorted
		// keeps ours deterministic.
		sort.Strings(extras)
		var out []*vError
		for _, k := range extras {
			out = append(out, descend(kw.sub, o.m[k], k, nil)...)
		}
		return out
	}
	if kw.boolean || len(extras) == 0 {
		return nil
	}
	sort.Strings(extras)
	reprs := make([]string, len(extras))
	for i, e := range extras {
		reprs[i] = strRepr(e)
	}
	if pp, ok := n.src.m["patternProperties"].(*object); ok {
		verb := "does"
		if len(extras) > 1 {
			verb = "do"
		}
		pats := pp.sortedKeys()
		for i, p := range pats {
			pats[i] = strRepr(p)
		}
		return newErr("%s %s not match any of the regexes: %s",
			strings.Join(reprs, ", "), verb, strings.Join(pats, ", "))
	}
	verb := "was"
	if len(extras) > 1 {
		verb = "were"
	}
	return newErr("Additional properties are not allowed (%s %s unexpected)",
		strings.Join(reprs, ", "), verb)
}

func checkRequired(_ *node, kw *keyword, inst any) []*vError {
	o, ok := inst.(*object)
	if !ok {
		return nil
	}
	var out []*vError
	for _, r := range kw.strs {
		if _, ok := o.m[r]; !ok {
			out = append(out, newErr("%s is a required property", strRepr(r))...)
		}
	}
	return out
}

func checkItems(_ *node, kw *keyword, inst any) []*vError {
	l, ok := inst.([]any)
	if !ok {
		return nil
	}
	var out []*vError
	for i, e := range l {
		out = append(out, descend(kw.sub, e, i, nil)...)
	}
	return out
}

func checkAnyOf(_ *node, kw *keyword, inst any) []*vError {
	var all []*vError
	for i, s := range kw.subs {
		errs := descend(s, inst, nil, i)
		if len(errs) == 0 {
			return nil
		}
		all = append(all, errs...)
	}
	e := newErr("%s is not valid under any of the given schemas", pyRepr(inst, false))
	e[0].context = all
	return e
}

func checkOneOf(_ *node, kw *keyword, inst any) []*vError {
	var all []*vError
	first := -1
	for i, s := range kw.subs {
		errs := descend(s, inst, nil, i)
		if len(errs) == 0 {
			first = i
			break
		}
		all = append(all, errs...)
	}
	if first < 0 {
		e := newErr("%s is not valid under any of the given schemas", pyRepr(inst, false))
		e[0].context = all
		return e
	}
	var more []string
	for _, s := range kw.subs[first+1:] {
		if s.isValid(inst) {
			more = append(more, pyRepr(s.src, false))
		}
	}
	if len(more) == 0 {
		return nil
	}
	more = append(more, pyRepr(kw.subs[first].src, false))
	return newErr("%s is valid under each of %s", pyRepr(inst, false), strings.Join(more, ", "))
}

func checkMinimum(_ *node, kw *keyword, inst any) []*vError {
	n, ok := inst.(*number)
	if !ok {
		return nil
	}
	if c, ok := cmpNumbers(n, kw.num); ok && c < 0 {
		return newErr("%s is less than the minimum of %s", numRepr(n), numRepr(kw.num))
	}
	return nil
}

func checkMaximum(_ *node, kw *keyword, inst any) []*vError {
	n, ok := inst.(*number)
	if !ok {
		return nil
	}
	if c, ok := cmpNumbers(n, kw.num); ok && c > 0 {
		return newErr("%s is greater than the maximum of %s", numRepr(n), numRepr(kw.num))
	}
	return nil
}

func countChecker(name string) func(*node, *keyword, any) []*vError {
	switch name {
	case "minLength":
		return checkMinLength
	case "maxLength":
		return checkMaxLength
	case "minItems":
		return checkMinItems
	case "maxItems":
		return checkMaxItems
	case "minProperties":
		return checkMinProperties
	default:
		return checkMaxProperties
	}
}

func checkMinLength(_ *node, kw *keyword, inst any) []*vError {
	if s, ok := inst.(string); ok && runeLen(s) < kw.count {
		return newErr("%s is too short", strRepr(s))
	}
	return nil
}

func checkMaxLength(_ *node, kw *keyword, inst any) []*vError {
	if s, ok := inst.(string); ok && runeLen(s) > kw.count {
		return newErr("%s is too long", strRepr(s))
	}
	return nil
}

func checkMinItems(_ *node, kw *keyword, inst any) []*vError {
	if l, ok := inst.([]any); ok && len(l) < kw.count {
		return newErr("%s is too short", pyRepr(l, false))
	}
	return nil
}

func checkMaxItems(_ *node, kw *keyword, inst any) []*vError {
	if l, ok := inst.([]any); ok && len(l) > kw.count {
		return newErr("%s is too long", pyRepr(l, false))
	}
	return nil
}

func checkMinProperties(_ *node, kw *keyword, inst any) []*vError {
	if o, ok := inst.(*object); ok && o.len() < kw.count {
		return newErr("%s does not have enough properties", pyRepr(o, false))
	}
	return nil
}

func checkMaxProperties(_ *node, kw *keyword, inst any) []*vError {
	if o, ok := inst.(*object); ok && o.len() > kw.count {
		return newErr("%s has too many properties", pyRepr(o, false))
	}
	return nil
}

func checkUniqueItems(_ *node, kw *keyword, inst any) []*vError {
	l, ok := inst.([]any)
	if !ok || !kw.boolean {
		return nil
	}
	if allStrings(l) {
		// Common case (aggregate uuids): linear instead of pairwise.
		seen := make(map[string]struct{}, len(l))
		for _, e := range l {
			if _, dup := seen[e.(string)]; dup {
				return newErr("%s has non-unique elements", pyRepr(l, false))
			}
			seen[e.(string)] = struct{}{}
		}
		return nil
	}
	for i := range l {
		for j := i + 1; j < len(l); j++ {
			if pyEqual(l[i], l[j]) {
				return newErr("%s has non-unique elements", pyRepr(l, false))
			}
		}
	}
	return nil
}

func allStrings(l []any) bool {
	for _, e := range l {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

func checkPattern(_ *node, kw *keyword, inst any) []*vError {
	s, ok := inst.(string)
	if !ok || kw.re.MatchString(s) {
		return nil
	}
	return newErr("%s does not match %s", strRepr(s), strRepr(kw.value.(string)))
}

func checkEnum(_ *node, kw *keyword, inst any) []*vError {
	for _, e := range kw.value.([]any) {
		if pyEqual(inst, e) {
			return nil
		}
	}
	return newErr("%s is not one of %s", pyRepr(inst, false), pyRepr(kw.value, false))
}

func checkFormat(_ *node, kw *keyword, inst any) []*vError {
	if kw.formatFn == nil || kw.formatFn(inst) {
		return nil
	}
	return newErr("%s is not a %s", pyRepr(inst, false), strRepr(kw.value.(string)))
}

// formatChecker returns the checker for the formats Placement's
// FormatChecker knows about that its schemas use; nil means "always valid",
// as for any format jsonschema does not know.
func formatChecker(name string) func(any) bool {
	if name == "uuid" {
		return isUUIDLike
	}
	return nil
}

// isUUIDLike mirrors oslo.utils' is_uuid_like, which Placement registers as
// the "uuid" format: after dropping every "urn:" and "uuid:", trimming
// braces from both ends and removing all dashes, exactly 32 hex digits must
// remain. So dashless and oddly dashed uuids are accepted, and non-strings
// are rejected.
func isUUIDLike(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// relevance is jsonschema's by_relevance key; larger is more relevant.
type relKey struct {
	negPathLen  int
	notWeak     bool
	notMatching bool
}

func relevance(e *vError) relKey {
	return relKey{
		negPathLen:  -len(e.path),
		notWeak:     e.keyword != "anyOf" && e.keyword != "oneOf",
		notMatching: !e.matchesType(),
	}
}

func (e *vError) matchesType() bool {
	if e.schema == nil || e.schema.types == nil {
		return false
	}
	for _, t := range e.schema.types {
		if isType(e.instance, t) {
			return true
		}
	}
	return false
}

func (a relKey) less(b relKey) bool {
	if a.negPathLen != b.negPathLen {
		return a.negPathLen < b.negPathLen
	}
	if a.notWeak != b.notWeak {
		return !a.notWeak
	}
	if a.notMatching != b.notMatching {
		return !a.notMatching
	}
	return false
}

// bestMatch is jsonschema.exceptions.best_match: the most relevant error
// (the first one on ties), then descent into anyOf/oneOf contexts towards
// the least relevant (deepest) sub-error while that choice is unambiguous.
func bestMatch(errs []*vError) *vError {
	if len(errs) == 0 {
		return nil
	}
	best := errs[0]
	bk := relevance(best)
	for _, e := range errs[1:] {
		if k := relevance(e); bk.less(k) {
			best, bk = e, k
		}
	}
	for len(best.context) > 0 {
		// Stable two smallest, as heapq.nsmallest(2, ...).
		ctx := append([]*vError(nil), best.context...)
		sort.SliceStable(ctx, func(i, j int) bool { return relevance(ctx[i]).less(relevance(ctx[j])) })
		if len(ctx) >= 2 && relevance(ctx[0]) == relevance(ctx[1]) {
			return best
		}
		best = ctx[0]
	}
	return best
}
