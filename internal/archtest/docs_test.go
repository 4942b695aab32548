package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// manualFiles are the repository's documents whose relative links
// TestDocLinks follows: the front page, the changelog and the manual.
func manualFiles(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(moduleRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatalf("no docs/*.md under %s", moduleRoot)
	}
	return append([]string{filepath.Join(moduleRoot, "README.md"), filepath.Join(moduleRoot, "CHANGELOG.md")}, docs...)
}

// TestDocLinks: every relative link in README.md, CHANGELOG.md and
// docs/*.md leads to a file or folder of the repository, and a link to a
// heading (#anchor) to a heading the target has, so that moving a text
// cannot leave a reader at a dead end.
func TestDocLinks(t *testing.T) {
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range manualFiles(t) {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("read %s: %v", file, err)
			continue
		}
		rel, _ := filepath.Rel(moduleRoot, file)
		for _, link := range markdownLinks(string(text)) {
			if problem := checkLink(root, file, link); problem != "" {
				t.Errorf("%s: link %q: %s", rel, link, problem)
			}
		}
	}
}

// checkLink says what is wrong with one link of file, or "" when it
// resolves. Links with a scheme (https:, mailto:) are not followed.
func checkLink(root, file, link string) string {
	if regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`).MatchString(link) {
		return ""
	}
	target, anchor, _ := strings.Cut(link, "#")
	path, err := filepath.Abs(file)
	if err != nil {
		return err.Error()
	}
	if target != "" {
		path = filepath.Join(filepath.Dir(path), filepath.FromSlash(target))
	}
	if r, err := filepath.Rel(root, path); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "points outside the repository"
	}
	if _, err := os.Stat(path); err != nil {
		return "no such file"
	}
	if anchor == "" || !strings.HasSuffix(path, ".md") {
		return ""
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	if !headingAnchors(string(text))[anchor] {
		return "no heading with anchor #" + anchor
	}
	return ""
}

var (
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	linkTarget = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.+?)\s*#*\s*$`)
)

// markdownLines are the lines of a markdown text outside fenced code
// blocks, whose brackets are code rather than links.
func markdownLines(text string) []string {
	var lines []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			lines = append(lines, line)
		}
	}
	return lines
}

// markdownLinks are the targets of the inline links and images of a
// markdown text, code spans and fenced blocks left out.
func markdownLinks(text string) []string {
	var links []string
	for _, line := range markdownLines(text) {
		line = codeSpan.ReplaceAllStringFunc(line, func(span string) string {
			return strings.Repeat("x", len(span)) // keeps [`a`](b) a link
		})
		for _, m := range linkTarget.FindAllStringSubmatch(line, -1) {
			links = append(links, m[1])
		}
	}
	return links
}

// headingAnchors are the anchors GitHub gives a document's headings:
// lower case, punctuation dropped, spaces as hyphens, a repeated one
// numbered -1, -2, ...
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range markdownLines(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		slug := slugOf(m[1])
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// slugOf is GitHub's anchor of a heading's text.
func slugOf(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
