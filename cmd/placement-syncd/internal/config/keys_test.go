package config

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The annotated sample is where every key is explained, and Default is
// where every default comes from: the tests below keep the two whole
// (samples_test.go), and generate docs/configuration.md from both
// (reference_test.go).

// samplePath is the annotated sample, from this package's directory;
// sampleName is how messages name it.
const (
	samplePath = "../../../../configs/placement-syncd.yaml"
	sampleName = "configs/placement-syncd.yaml"
)

// configKey is one leaf of the configuration: a value an operator sets.
type configKey struct {
	name string        // dotted, "api.listen"
	typ  reflect.Type  // its Go type
	def  reflect.Value // its default, from Default()
}

// defaultKeys lists every leaf of Default(), walking the yaml tags of the
// Config struct and its sections; a map's leaves are the names its
// default holds (reconciler.jobs: one per job).
func defaultKeys() []configKey {
	var keys []configKey
	var walk func(v reflect.Value, path []string)
	walk = func(v reflect.Value, path []string) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if name := yamlName(v.Type().Field(i)); name != "" && name != "-" {
					walk(v.Field(i), append(slices.Clone(path), name))
				}
			}
		case reflect.Map:
			names := make([]string, 0, v.Len())
			for _, k := range v.MapKeys() {
				names = append(names, k.String())
			}
			slices.Sort(names)
			for _, n := range names {
				walk(v.MapIndex(reflect.ValueOf(n)), append(slices.Clone(path), n))
			}
		default:
			keys = append(keys, configKey{name: strings.Join(path, "."), typ: v.Type(), def: v})
		}
	}
	walk(reflect.ValueOf(Default()), nil)
	return keys
}

// sampleEntry is one key of the sample: a section (a mapping of keys of
// a struct or map type) or a leaf.
type sampleEntry struct {
	path    []string
	comment string // the comment lines directly above the key, "# " removed
	key     *yaml.Node
	value   *yaml.Node
	typ     reflect.Type // nil: Config has no such key
	entries []*sampleEntry
}

func (e *sampleEntry) name() string { return strings.Join(e.path, ".") }

func (e *sampleEntry) isSection() bool {
	return e.typ != nil && (e.typ.Kind() == reflect.Struct || e.typ.Kind() == reflect.Map) && e.value.Kind == yaml.MappingNode
}

// leaves lists the leaves under e, in the file's order.
func (e *sampleEntry) leaves() []*sampleEntry {
	var out []*sampleEntry
	for _, c := range e.entries {
		if c.isSection() {
			out = append(out, c.leaves()...)
		} else {
			out = append(out, c)
		}
	}
	return out
}

// sampleDoc is the parsed sample: its opening comment and its sections.
type sampleDoc struct {
	head string
	root *sampleEntry
}

// readSample parses the annotated sample into entries typed by Config.
func readSample(t *testing.T) sampleDoc {
	t.Helper()
	data, err := os.ReadFile(samplePath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", sampleName, err)
	}
	if doc.Kind != yaml.DocumentNode || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s: not a mapping of sections", sampleName)
	}
	root := &sampleEntry{typ: reflect.TypeFor[Config](), value: doc.Content[0]}
	root.entries = sampleEntries(doc.Content[0], root.typ, nil)
	return sampleDoc{head: uncomment(doc.HeadComment), root: root}
}

func sampleEntries(m *yaml.Node, t reflect.Type, path []string) []*sampleEntry {
	var out []*sampleEntry
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		e := &sampleEntry{path: append(slices.Clone(path), k.Value), comment: uncomment(k.HeadComment), key: k, value: v}
		switch {
		case t != nil && t.Kind() == reflect.Struct:
			if f, ok := fieldByTag(t, k.Value); ok {
				e.typ = f.Type
			}
		case t != nil && t.Kind() == reflect.Map:
			e.typ = t.Elem()
		}
		if e.isSection() {
			e.entries = sampleEntries(v, e.typ, e.path)
		}
		out = append(out, e)
	}
	return out
}

// uncomment turns "# a\n#   b\n#" into "a\n  b\n".
func uncomment(c string) string {
	if c == "" {
		return ""
	}
	lines := strings.Split(c, "\n")
	for i, l := range lines {
		l = strings.TrimPrefix(strings.TrimSpace(l), "#")
		lines[i] = strings.TrimPrefix(l, " ")
	}
	return strings.Join(lines, "\n")
}

// sameValue is reflect.DeepEqual, but an empty list or map equals a nil
// one (YAML's [] decodes to an empty slice).
func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Slice, reflect.Map:
		if a.Len() == 0 && b.Len() == 0 {
			return true
		}
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}

// formatValue writes v as it would be written in the YAML file.
func formatValue(v reflect.Value) string {
	if d, ok := v.Interface().(time.Duration); ok {
		return formatDuration(d)
	}
	switch v.Kind() {
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Pointer:
		if v.IsNil() {
			return "null"
		}
		return formatValue(v.Elem())
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range v.Len() {
			parts[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// formatDuration is d.String() without the zero units a person leaves
// out: 1h, 5m, 1m30s, 100ms, 0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
