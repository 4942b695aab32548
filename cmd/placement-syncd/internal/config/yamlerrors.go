package config

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// syntaxError turns "yaml: line 3: msg" into "file:3: msg".
func syntaxError(path string, err error) error {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", path, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
}

var (
	unknownFieldRE = regexp.MustCompile(`^field (\S+) not found in type`)
	badValueRE     = regexp.MustCompile(`^cannot unmarshal (!!\w+)(?: .*)? into (\S+)$`)
	duplicateRE    = regexp.MustCompile(`^mapping key "((?:[^"\\]|\\.)*)" already defined at line (\d+)$`)
)

// describeTypeError rewrites one of yaml.v3's per-line decode messages in
// the operator's terms: the file, the line, the dotted key, and what was
// expected there.
func describeTypeError(path string, root *yaml.Node, msg string) error {
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Errorf("%s: %s", path, msg)
	}
	line, _ := strconv.Atoi(m[1])
	rest := m[2]
	if u := unknownFieldRE.FindStringSubmatch(rest); u != nil {
		section, _ := findKeyAt(root, nil, line, u[1])
		return unknownKeyError(path, line, u[1], section)
	}
	if d := duplicateRE.FindStringSubmatch(rest); d != nil {
		key, _ := strconv.Unquote(`"` + d[1] + `"`)
		section, _ := findKeyAt(root, nil, line, key)
		return fmt.Errorf("%s:%d: duplicate key %q%s (first at line %s)", path, line, key, inSection(section), d[2])
	}
	if b := badValueRE.FindStringSubmatch(rest); b != nil {
		if key, val := findValueAt(root, nil, line, b[1]); key != nil {
			return fmt.Errorf("%s:%d: %s: invalid value %s: expected %s", path, line, strings.Join(key, "."), describeNode(val), expected(b[2]))
		}
	}
	return fmt.Errorf("%s:%d: %s", path, line, rest)
}

func unknownKeyError(path string, line int, key string, section []string) error {
	known := knownKeys(section)
	hint := ""
	if len(known) > 0 {
		hint = " (known: " + strings.Join(known, ", ") + ")"
	}
	return fmt.Errorf("%s:%d: unknown key %q%s%s", path, line, key, inSection(section), hint)
}

func inSection(section []string) string {
	if len(section) == 0 {
		return " at the top level"
	}
	return fmt.Sprintf(" in section %q", strings.Join(section, "."))
}

// knownKeys lists the YAML keys of the struct at the dotted path section.
func knownKeys(section []string) []string {
	t := reflect.TypeFor[Config]()
	for _, name := range section {
		f, ok := fieldByTag(t, name)
		if !ok || f.Type.Kind() != reflect.Struct {
			return nil
		}
		t = f.Type
	}
	var keys []string
	for i := range t.NumField() {
		if tag := yamlName(t.Field(i)); tag != "" {
			keys = append(keys, tag)
		}
	}
	return keys
}

func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		if yamlName(t.Field(i)) == name {
			return t.Field(i), true
		}
	}
	return reflect.StructField{}, false
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	return name
}

// expected names, for an operator, what a Go type accepts.
func expected(goType string) string {
	switch goType {
	case "time.Duration":
		return `a duration such as "10s" or "1m30s"`
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return "an integer"
	}
	if strings.HasPrefix(goType, "config.") {
		return "a mapping of keys"
	}
	return goType
}

func describeNode(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "(a mapping)"
	case yaml.SequenceNode:
		return "(a list)"
	}
	return strconv.Quote(n.Value)
}

// findKey returns the value node at the dotted path in a mapping tree;
// a number indexes a list ("reconciler.nova.cell_databases.1.dsn").
func findKey(n *yaml.Node, path []string) *yaml.Node {
	for _, name := range path {
		if i, err := strconv.Atoi(name); err == nil && n != nil && n.Kind == yaml.SequenceNode {
			if i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
			continue
		}
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				next = n.Content[i+1]
			}
		}
		n = next
	}
	return n
}

// findKeyAt finds the mapping that has key on line and returns its path.
func findKeyAt(n *yaml.Node, path []string, line int, key string) ([]string, bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Line == line && k.Value == key {
			return path, true
		}
		if p, ok := findKeyAt(v, append(slices.Clone(path), k.Value), line, key); ok {
			return p, true
		}
	}
	return nil, false
}

// findValueAt finds the key whose value of the given YAML tag kind
// (!!map, !!seq, or a scalar tag) starts on line.
func findValueAt(n *yaml.Node, path []string, line int, tag string) ([]string, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	want := yaml.ScalarNode
	switch tag {
	case "!!map":
		want = yaml.MappingNode
	case "!!seq":
		want = yaml.SequenceNode
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := append(slices.Clone(path), k.Value)
		if v.Line == line && v.Kind == want {
			return p, v
		}
		if kp, kv := findValueAt(v, p, line, tag); kp != nil {
			return kp, kv
		}
	}
	return nil, nil
}
