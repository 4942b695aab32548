// Package osloconf reads the INI files of oslo.config, the configuration
// library of OpenStack services (placement.conf, nova.conf): sections,
// "key = value" or "key: value" options, indented continuation lines,
// comments starting with '#' or ';', and repeated keys. Every value keeps
// its line number, so that a caller can name file, line, section and key
// when it rejects one.
package osloconf

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Value is one option as written.
type Value struct {
	Section, Key, Text string
	Line               int
}

// File is a parsed configuration file.
type File struct {
	Path string
	// Values in file order; a repeated key appears once per occurrence.
	Values []Value
}

// Load reads and parses the file at path.
func Load(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse parses r, naming it path in errors.
func Parse(path string, r io.Reader) (*File, error) {
	out := &File{Path: path}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	section, line := "", 0
	last := -1 // index of the value a continuation line extends
	for sc.Scan() {
		line++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		text := strings.TrimSpace(raw)
		switch {
		case text == "" || text[0] == '#' || text[0] == ';':
			if text == "" {
				last = -1
			}
			continue
		case raw[0] == ' ' || raw[0] == '\t':
			if last < 0 {
				return nil, fmt.Errorf("%s:%d: indented line continues no option", path, line)
			}
			out.Values[last].Text = strings.TrimSpace(out.Values[last].Text + "\n" + text)
			continue
		case text[0] == '[':
			if !strings.HasSuffix(text, "]") || len(text) < 3 {
				return nil, fmt.Errorf("%s:%d: invalid section header %q", path, line, text)
			}
			section, last = strings.TrimSpace(text[1:len(text)-1]), -1
			continue
		}
		if section == "" {
			return nil, fmt.Errorf("%s:%d: option before any [section]", path, line)
		}
		key, value, ok := splitOption(text)
		if !ok {
			return nil, fmt.Errorf("%s:%d: [%s]: want key = value, got %q", path, line, section, text)
		}
		out.Values = append(out.Values, Value{Section: section, Key: key, Text: value, Line: line})
		last = len(out.Values) - 1
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// splitOption splits "key = value" or "key: value" at the first
// separator; oslo.config treats '-' in a name as '_'.
func splitOption(text string) (key, value string, ok bool) {
	i := strings.IndexAny(text, "=:")
	if i <= 0 {
		return "", "", false
	}
	key = strings.ReplaceAll(strings.TrimSpace(text[:i]), "-", "_")
	value = strings.TrimSpace(text[i+1:])
	if len(value) >= 2 && (value[0] == '"' && value[len(value)-1] == '"' || value[0] == '\'' && value[len(value)-1] == '\'') {
		value = value[1 : len(value)-1]
	}
	return key, value, key != ""
}

// Error is a rejected value, naming where it is written.
type Error struct {
	Path string
	V    Value
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: [%s] %s: %s", e.Path, e.V.Line, e.V.Section, e.V.Key, e.Msg)
}

// Bad returns the Error for v.
func (f *File) Bad(v Value, format string, args ...any) *Error {
	return &Error{Path: f.Path, V: v, Msg: fmt.Sprintf(format, args...)}
}

// Bool reads an oslo.config boolean (true/false, yes/no, on/off, 1/0,
// any case).
func Bool(v Value) (bool, error) {
	switch strings.ToLower(v.Text) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean %q (true or false)", v.Text)
}

// Int reads an integer.
func Int(v Value) (int, error) {
	n, err := strconv.Atoi(v.Text)
	if err != nil {
		return 0, fmt.Errorf("invalid integer %q", v.Text)
	}
	return n, nil
}

// List reads an oslo.config list: comma-separated, blanks dropped.
func List(v Value) []string {
	var out []string
	for _, s := range strings.Split(v.Text, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
