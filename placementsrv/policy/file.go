package policy

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// fileRule is one entry of an operator policy file.
type fileRule struct {
	name  string
	check *node
	// line is where the rule's name stands in the file (of the last
	// entry, for a name given twice).
	line int
}

// parseFile reads a policy file: a YAML (or JSON, which YAML includes)
// mapping of rule name to rule, where a rule is a policy-language string,
// an old-style list of lists, or null (allow, as upstream reads it). A
// later duplicate key replaces an earlier one, as both upstream parsers
// do. Anything upstream could not apply stops loading, naming the rule.
func parseFile(path string, data []byte) ([]fileRule, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &RuleError{File: path, Err: err}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, &RuleError{File: path, Err: errNotMapping}
	}
	var out []fileRule
	index := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, &RuleError{File: path, Err: fmt.Errorf("line %d: a rule name must be a string", k.Line)}
		}
		name := k.Value
		check, err := parseFileValue(v)
		if err != nil {
			return nil, &RuleError{File: path, Rule: name, Err: fmt.Errorf("line %d: %w", v.Line, err)}
		}
		if j, ok := index[name]; ok {
			out[j].check, out[j].line = check, k.Line
			continue
		}
		index[name] = len(out)
		out = append(out, fileRule{name: name, check: check, line: k.Line})
	}
	return out, nil
}

func parseFileValue(v *yaml.Node) (*node, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		switch v.Tag {
		case "!!str":
			return parseRule(v.Value)
		case "!!null":
			return &node{op: opTrue}, nil
		}
		return nil, fmt.Errorf("%w: %s is not a rule (use a string such as \"role:admin\")", ErrSyntax, v.Value)
	case yaml.SequenceNode:
		var list []any
		if err := v.Decode(&list); err != nil {
			return nil, err
		}
		return parseList(list)
	case yaml.AliasNode:
		if v.Alias != nil {
			return parseFileValue(v.Alias)
		}
	}
	return nil, errors.New("a rule must be a string or a list of lists of strings")
}
