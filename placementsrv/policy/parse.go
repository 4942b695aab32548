// Package policy is Placement's authorization engine: the oslo.policy rule
// language (parser and evaluator), Placement 8.0.0's default rules in the
// legacy and secure-RBAC modes, scope checking and operator policy files.
//
// The parser reproduces oslo.policy's greedy shift-reduce parser, so a
// rule string means the same thing here as upstream, quirks included
// ("a or b and c" is "a or (b and c)"). Where upstream silently turns a
// rule it cannot understand into "deny", the parser returns an error:
// callers stop start-up naming the rule rather than deny at run time.
package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// token kinds of the shift-reduce parser, named as upstream names them.
type tokKind uint8

const (
	tokLParen tokKind = iota + 1
	tokRParen
	tokAnd
	tokOr
	tokNot
	tokCheck
	tokString
	tokAndExpr
	tokOrExpr
)

type token struct {
	kind tokKind
	node *node
}

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("policy rule syntax error")

// parseRule parses a rule in the policy language. The empty string is "@"
// (always allow), as upstream.
func parseRule(rule string) (*node, error) {
	if rule == "" {
		return &node{op: opTrue}, nil
	}
	var st parseState
	for _, f := range strings.FieldsFunc(rule, isPySpace) {
		if err := st.shiftWord(f); err != nil {
			return nil, err
		}
	}
	if len(st.toks) != 1 {
		return nil, fmt.Errorf("%w: %q does not reduce to one expression", ErrSyntax, rule)
	}
	switch st.toks[0].kind {
	case tokCheck, tokAndExpr, tokOrExpr:
		return st.toks[0].node, nil
	}
	return nil, fmt.Errorf("%w: %q is not an expression", ErrSyntax, rule)
}

// isPySpace is Python's str.isspace, which the tokenizer's \s follows.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

type parseState struct {
	toks []token
}

// shiftWord tokenizes one whitespace-separated word as upstream does:
// leading "(" and trailing ")" are tokens of their own; and/or/not are
// keywords in any case; a word quoted at both ends is a string (which no
// reduction accepts); anything else is a check.
func (st *parseState) shiftWord(tok string) error {
	clean := strings.TrimLeft(tok, "(")
	for range len(tok) - len(clean) {
		st.shift(token{kind: tokLParen})
	}
	if clean == "" {
		return nil
	}
	tok = clean
	clean = strings.TrimRight(tok, ")")
	trail := len(tok) - len(clean)
	if clean != "" {
		switch lowered := strings.ToLower(clean); {
		case lowered == "and":
			st.shift(token{kind: tokAnd})
		case lowered == "or":
			st.shift(token{kind: tokOr})
		case lowered == "not":
			st.shift(token{kind: tokNot})
		case len(tok) >= 2 && (tok[0] == '"' && tok[len(tok)-1] == '"' || tok[0] == '\'' && tok[len(tok)-1] == '\''):
			st.shift(token{kind: tokString})
		default:
			n, err := parseCheck(clean)
			if err != nil {
				return err
			}
			st.shift(token{kind: tokCheck, node: n})
		}
	}
	for range trail {
		st.shift(token{kind: tokRParen})
	}
	return nil
}

func (st *parseState) shift(t token) {
	st.toks = append(st.toks, t)
	st.reduce()
}

// tail reports whether the last tokens have the given kinds.
func (st *parseState) tail(kinds ...tokKind) bool {
	n := len(st.toks)
	if n < len(kinds) {
		return false
	}
	for i, k := range kinds {
		if st.toks[n-len(kinds)+i].kind != k {
			return false
		}
	}
	return true
}

// replace swaps the last n tokens for t.
func (st *parseState) replace(n int, t token) {
	st.toks = append(st.toks[:len(st.toks)-n], t)
}

// reduce applies the first matching reduction, in upstream's order, and
// repeats until none matches.
func (st *parseState) reduce() {
	for {
		n := len(st.toks)
		switch {
		case st.tail(tokLParen, tokOrExpr, tokRParen), st.tail(tokLParen, tokAndExpr, tokRParen), st.tail(tokLParen, tokCheck, tokRParen):
			st.replace(3, token{kind: tokCheck, node: st.toks[n-2].node})
		case st.tail(tokCheck, tokAnd, tokCheck):
			st.replace(3, token{kind: tokAndExpr, node: &node{op: opAnd, kids: []*node{st.toks[n-3].node, st.toks[n-1].node}}})
		case st.tail(tokOrExpr, tokAnd, tokCheck):
			or, check := st.toks[n-3].node, st.toks[n-1].node
			last := or.kids[len(or.kids)-1]
			if last.op == opAnd {
				last.kids = append(last.kids, check)
			} else {
				or.kids[len(or.kids)-1] = &node{op: opAnd, kids: []*node{last, check}}
			}
			st.replace(3, token{kind: tokOrExpr, node: or})
		case st.tail(tokAndExpr, tokAnd, tokCheck):
			and := st.toks[n-3].node
			and.kids = append(and.kids, st.toks[n-1].node)
			st.replace(3, token{kind: tokAndExpr, node: and})
		case st.tail(tokAndExpr, tokOr, tokCheck), st.tail(tokCheck, tokOr, tokCheck):
			st.replace(3, token{kind: tokOrExpr, node: &node{op: opOr, kids: []*node{st.toks[n-3].node, st.toks[n-1].node}}})
		case st.tail(tokOrExpr, tokOr, tokCheck):
			or := st.toks[n-3].node
			or.kids = append(or.kids, st.toks[n-1].node)
			st.replace(3, token{kind: tokOrExpr, node: or})
		case st.tail(tokNot, tokCheck):
			st.replace(2, token{kind: tokCheck, node: &node{op: opNot, kids: []*node{st.toks[n-1].node}}})
		default:
			return
		}
	}
}

// parseCheck parses one "kind:match" check, or "@" / "!".
func parseCheck(s string) (*node, error) {
	switch s {
	case "!":
		return &node{op: opFalse}, nil
	case "@":
		return &node{op: opTrue}, nil
	}
	kind, match, ok := strings.Cut(s, ":")
	if !ok {
		return nil, fmt.Errorf("%w: check %q is not of the form kind:match", ErrSyntax, s)
	}
	n := &node{kind: kind, match: match}
	switch kind {
	case "rule":
		n.op = opRule
		return n, nil
	case "role":
		n.op = opRole
	case "http", "https":
		n.op = opHTTP
	default:
		n.op = opGeneric
		n.literal, n.isLiteral = pyLiteral(kind)
		if !n.isLiteral && isPyPath(kind) {
			n.path = strings.Split(kind, ".")
		}
	}
	n.tmpl = parseTemplate(match)
	if n.op == opHTTP {
		n.tmpl = parseTemplate(kind + ":" + match)
	}
	return n, nil
}

// parseList parses the old list-of-lists form: the outer list is "or",
// each inner list "and", each element a single check. Elements that are
// not strings are upstream's "deny" checks.
func parseList(rule []any) (*node, error) {
	if len(rule) == 0 {
		return &node{op: opTrue}, nil
	}
	var ors []*node
	for _, inner := range rule {
		var items []any
		switch v := inner.(type) {
		case string:
			items = []any{v}
		case []any:
			items = v
		default:
			return nil, fmt.Errorf("%w: list element %v is neither a string nor a list", ErrSyntax, inner)
		}
		if len(items) == 0 {
			continue
		}
		var ands []*node
		for _, it := range items {
			s, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("%w: list element %v is not a string", ErrSyntax, it)
			}
			n, err := parseCheck(s)
			if err != nil {
				return nil, err
			}
			ands = append(ands, n)
		}
		if len(ands) == 1 {
			ors = append(ors, ands[0])
		} else {
			ors = append(ors, &node{op: opAnd, kids: ands})
		}
	}
	switch len(ors) {
	case 0:
		return &node{op: opFalse}, nil
	case 1:
		return ors[0], nil
	}
	return &node{op: opOr, kids: ors}, nil
}

// isPyPath reports whether kind is a dotted path of Python identifiers,
// which upstream looks up in the credentials; other kinds that are not
// literals make its literal_eval raise.
func isPyPath(kind string) bool {
	for _, seg := range strings.Split(kind, ".") {
		if seg == "" || pyKeywords[seg] {
			return false
		}
		for i, r := range seg {
			if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
				return false
			}
		}
	}
	return true
}

var pyKeywords = map[string]bool{
	"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}
