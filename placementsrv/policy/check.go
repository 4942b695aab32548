package policy

import (
	"math"
	"strconv"
	"strings"
)

type opKind uint8

const (
	opTrue opKind = iota + 1
	opFalse
	opAnd
	opOr
	opNot
	opRule
	opRole
	opGeneric
	opHTTP
)

// node is one check of a parsed rule. Rules are compiled once at start;
// evaluating a node does not allocate except for templates with more than
// one substitution.
type node struct {
	op   opKind
	kids []*node
	// kind and match are the two halves of "kind:match", kept for String.
	kind, match string
	// tmpl is match as a %-format template over the target.
	tmpl template
	// ref is what a rule: check points at once rules are linked; nil when
	// the rule does not exist (the check denies).
	ref *Rule
	// remote performs http: and https: checks.
	remote *remoteChecker
	// literal is the string form of a generic check's kind when the kind
	// is a Python literal ("True", "'x'", "20"); path is the dotted
	// credential path otherwise.
	literal   string
	isLiteral bool
	path      []string
}

// String renders the check as oslo.policy does (and/or groups in
// parentheses), which is how "policy list" prints effective rules.
func (n *node) String() string {
	switch n.op {
	case opTrue:
		return "@"
	case opFalse:
		return "!"
	case opNot:
		return "not " + n.kids[0].String()
	case opAnd, opOr:
		sep := " and "
		if n.op == opOr {
			sep = " or "
		}
		parts := make([]string, len(n.kids))
		for i, k := range n.kids {
			parts[i] = k.String()
		}
		return "(" + strings.Join(parts, sep) + ")"
	}
	return n.kind + ":" + n.match
}

// evalCtx is one enforcement: who, on what, for which rule.
type evalCtx struct {
	c     *Credentials
	t     *Target
	rule  string
	depth int
	// failed records a check upstream could not evaluate (it raises, and
	// the request fails); the enforcement then denies whatever the
	// surrounding "not"s say.
	failed bool
}

// eval evaluates the check. depth guards against rule cycles, which
// linking rejects; it never trips for a linked rule set.
func (n *node) eval(x *evalCtx) bool {
	switch n.op {
	case opTrue:
		return true
	case opFalse:
		return false
	case opNot:
		return !n.kids[0].eval(x)
	case opAnd:
		for _, k := range n.kids {
			if !k.eval(x) {
				return false
			}
		}
		return true
	case opOr:
		for _, k := range n.kids {
			if k.eval(x) {
				return true
			}
		}
		return false
	case opRule:
		if n.ref == nil || x.depth > maxDepth {
			return false
		}
		x.depth++
		ok := n.ref.check.eval(x)
		x.depth--
		return ok
	case opRole:
		return n.evalRole(x)
	case opGeneric:
		return n.evalGeneric(x)
	case opHTTP:
		return n.remote != nil && n.remote.check(n, x)
	}
	return false
}

const maxDepth = 64

// evalRole: the rendered match equals one of the roles, ignoring case.
func (n *node) evalRole(x *evalCtx) bool {
	match, ok := n.tmpl.render(x)
	if !ok {
		return false
	}
	for _, r := range x.c.Roles {
		if strings.EqualFold(r, match) {
			return true
		}
	}
	return false
}

// evalGeneric: the rendered match equals the literal kind, or the
// credential value at the kind's dotted path (any element of a list).
func (n *node) evalGeneric(x *evalCtx) bool {
	match, ok := n.tmpl.render(x)
	if !ok {
		return false
	}
	if n.isLiteral {
		return match == n.literal
	}
	if n.path == nil {
		// Not a Python expression: upstream's literal_eval raises.
		x.failed = true
		return false
	}
	v, ok := x.c.lookup(n.path[0])
	if !ok {
		return false
	}
	rest := n.path[1:]
	if v.isList {
		if len(rest) != 0 && len(v.list) > 0 {
			x.failed = true
			return false
		}
		for _, e := range v.list {
			if e == match {
				return true
			}
		}
		return false
	}
	if len(rest) != 0 {
		// Indexing a string or None with a key raises upstream.
		x.failed = true
		return false
	}
	return v.String() == match
}

// template is a Python %-format string applied to a mapping: literal text
// with %(key)s substitutions and %% escapes.
type template struct {
	segs []tmplSeg
	// bad marks a format upstream cannot apply to a mapping target (it
	// raises at run time); the check denies.
	bad bool
}

type tmplSeg struct {
	lit string
	key string
	sub bool
}

func parseTemplate(s string) template {
	if !strings.Contains(s, "%") {
		return template{segs: []tmplSeg{{lit: s}}}
	}
	var t template
	var lit strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		if i+1 < len(s) && s[i+1] == '(' {
			end := strings.IndexByte(s[i+2:], ')')
			if end >= 0 && i+2+end+1 < len(s) && s[i+2+end+1] == 's' {
				if lit.Len() > 0 {
					t.segs = append(t.segs, tmplSeg{lit: lit.String()})
					lit.Reset()
				}
				t.segs = append(t.segs, tmplSeg{key: s[i+2 : i+2+end], sub: true})
				i += 2 + end + 1
				continue
			}
		}
		t.bad = true
		return t
	}
	if lit.Len() > 0 || len(t.segs) == 0 {
		t.segs = append(t.segs, tmplSeg{lit: lit.String()})
	}
	return t
}

// render applies the template to the target; false when a key is missing
// (upstream's KeyError, which makes the check deny).
func (t *template) render(x *evalCtx) (string, bool) {
	tg := x.t
	if t.bad {
		x.failed = true
		return "", false
	}
	if len(t.segs) == 1 {
		s := t.segs[0]
		if !s.sub {
			return s.lit, true
		}
		v, ok := tg.lookup(s.key)
		return v.String(), ok
	}
	var b strings.Builder
	for _, s := range t.segs {
		if !s.sub {
			b.WriteString(s.lit)
			continue
		}
		v, ok := tg.lookup(s.key)
		if !ok {
			return "", false
		}
		b.WriteString(v.String())
	}
	return b.String(), true
}

// pyLiteral evaluates s as Python's ast.literal_eval would for the scalar
// literals a policy kind can be (booleans, None, numbers, quoted strings)
// and returns str() of the value.
func pyLiteral(s string) (string, bool) {
	switch s {
	case "True", "False", "None":
		return s, true
	case "":
		return "", false
	}
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		body := s[1 : len(s)-1]
		if strings.ContainsAny(body, "\\"+s[:1]) {
			return "", false
		}
		return body, true
	}
	num := s
	neg := false
	for len(num) > 0 && (num[0] == '-' || num[0] == '+') {
		if num[0] == '-' {
			neg = !neg
		}
		num = num[1:]
	}
	if num == "" || !(num[0] >= '0' && num[0] <= '9' || num[0] == '.') {
		return "", false
	}
	if i, err := strconv.ParseInt(num, 0, 64); err == nil && (num == "0" || num[0] != '0' || len(num) > 1 && strings.ContainsAny(num[1:2], "xXoObB")) {
		if neg {
			i = -i
		}
		return strconv.FormatInt(i, 10), true
	}
	if len(num) > 1 && num[0] == '0' && strings.Trim(num, "0123456789") == "" {
		if strings.Trim(num, "0") == "" {
			return "0", true
		}
		return "", false // Python rejects leading zeros
	}
	if strings.ContainsAny(num, "xXoObB_") {
		return "", false
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !math.IsInf(f, 0) {
		return "", false
	}
	if neg {
		f = -f
	}
	return pyFloat(f), true
}

// pyFloat is Python's repr of a float.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
