package config

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// writeText writes a sample comment as Markdown: its lines as paragraphs,
// the indented ones (lists, commands) as code blocks, and the words with
// characters Markdown would read (_ * < >) as code.
func writeText(b *bytes.Buffer, text string) {
	var blocks, para []string
	flush := func() {
		if len(para) > 0 {
			blocks = append(blocks, strings.Join(para, "\n"))
			para = nil
		}
	}
	inCode := false // within a `code span`, which may run over lines
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		switch l := lines[i]; {
		case strings.TrimSpace(l) == "":
			flush()
		case strings.HasPrefix(l, " ") && !inCode:
			flush()
			j := i
			for j < len(lines) && strings.HasPrefix(lines[j], " ") {
				j++
			}
			blocks = append(blocks, "```text\n"+strings.Join(dedent(lines[i:j]), "\n")+"\n```")
			i = j - 1
		default:
			para = append(para, markdownLine(l, &inCode))
		}
	}
	flush()
	if len(blocks) > 0 {
		b.WriteString(strings.Join(blocks, "\n\n") + "\n\n")
	}
}

// dedent removes the indentation the lines share.
func dedent(lines []string) []string {
	indent := len(lines[0])
	for _, l := range lines {
		indent = min(indent, len(l)-len(strings.TrimLeft(l, " ")))
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l[indent:]
	}
	return out
}

// blockStart is what would make a line start a list, a heading or a quote.
var blockStart = regexp.MustCompile(`^([-+*]|\d+[.)]|#+|>)(\s|$)`)

// markdownLine quotes the words Markdown would misread as code spans,
// outside the code spans the comment already has.
func markdownLine(line string, inCode *bool) string {
	words := strings.Split(line, " ")
	for i, w := range words {
		if n := strings.Count(w, "`"); n > 0 {
			*inCode = *inCode != (n%2 == 1)
			continue
		}
		if *inCode || !strings.ContainsAny(w, "_*<>") {
			continue
		}
		core := strings.TrimLeft(w, `("'`)
		lead := w[:len(w)-len(core)]
		trimmed := trimTrailing(core)
		words[i] = lead + "`" + trimmed + "`" + core[len(trimmed):]
	}
	out := strings.Join(words, " ")
	if blockStart.MatchString(out) {
		out = `\` + out
	}
	return out
}

// trimTrailing drops the punctuation after a word: a closing bracket
// only when the word does not open it.
func trimTrailing(w string) string {
	for w != "" {
		c := w[len(w)-1]
		if !strings.ContainsRune(`.,;:)"'`, rune(c)) && (c != '}' || strings.Contains(w, "{")) && (c != ']' || strings.Contains(w, "[")) {
			break
		}
		w = w[:len(w)-1]
	}
	return w
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	writeText(&b, "Counted in placement_syncd_x_total, or \"*\" for\n"+
		"any; `a b\nc_d` stays, {x, updated_at}, a_[b].\n- 1 is not a list.\n\nHow:\n  noauth2   trusted\n  keystone  checked\nThen <token>.")
	want := "Counted in `placement_syncd_x_total`, or \"`*`\" for\nany; `a b\nc_d` stays, {x, `updated_at`}, `a_[b]`.\n\\- 1 is not a list.\n\n" +
		"How:\n\n```text\nnoauth2   trusted\nkeystone  checked\n```\n\nThen `<token>`.\n\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
