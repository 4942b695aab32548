package middleware

import (
	"html"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
)

// Upstream's errors are webob exceptions, whose body format follows the
// Accept header: JSON (Placement's error document), HTML or plain text.
// Placement's request-log middleware first turns a missing or "*/*" Accept
// into application/json, so JSON is the usual answer.

// errorFormat returns "json", "html" or "plain" as webob's
// generate_response decides it: the best of text/html and
// application/json by quality, text/html winning ties; plain text when
// neither is acceptable; HTML for an Accept header that does not parse.
func errorFormat(accept []string) string {
	value := strings.Join(accept, ", ")
	if strings.TrimSpace(value) == "" || strings.TrimSpace(value) == "*/*" {
		return "json"
	}
	ranges, ok := parseAccept(value)
	if !ok {
		return "html"
	}
	offers := []struct {
		typ, sub, format string
		q                float64
	}{{"text", "html", "html", 0}, {"application", "json", "json", 0}}
	for i := range offers {
		offers[i].q = acceptQuality(ranges, offers[i].typ, offers[i].sub)
	}
	sort.SliceStable(offers, func(i, j int) bool { return offers[i].q > offers[j].q })
	if offers[0].q <= 0 {
		return "plain"
	}
	return offers[0].format
}

type acceptRange struct {
	typ, sub string
	q        float64
	params   bool // media type parameters: matches no plain offer
}

// parseAccept parses an Accept header into media ranges; false when any
// element is not a media range with a valid q.
func parseAccept(value string) ([]acceptRange, bool) {
	var out []acceptRange
	for _, part := range strings.Split(value, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ";")
		typ, sub, ok := strings.Cut(strings.TrimSpace(fields[0]), "/")
		if !ok || !isToken(typ) || !isToken(sub) || (typ == "*" && sub != "*") {
			return nil, false
		}
		r := acceptRange{typ: strings.ToLower(typ), sub: strings.ToLower(sub), q: 1}
		r.params = len(fields) > 1 && hasMediaParams(strings.Join(fields[1:], ";"))
		for _, param := range fields[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(param), "=")
			if !ok {
				return nil, false
			}
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || q < 0 || q > 1 {
					return nil, false
				}
				r.q = q
			}
		}
		out = append(out, r)
	}
	return out, len(out) > 0
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("()<>@,;:\\\"/[]?={}", c) >= 0 {
			return false
		}
	}
	return true
}

// acceptQuality is the quality of the most specific range matching
// typ/sub, 0 when none matches.
func acceptQuality(ranges []acceptRange, typ, sub string) float64 {
	best, q := -1, 0.0
	for _, r := range ranges {
		spec := -1
		switch {
		case r.params:
		case r.typ == typ && r.sub == sub:
			spec = 2
		case r.typ == typ && r.sub == "*":
			spec = 1
		case r.typ == "*" && r.sub == "*":
			spec = 0
		}
		if spec > best {
			best, q = spec, r.q
		}
	}
	return q
}

// errorStatusLine is webob's status text, e.g. "404 Not Found".
func errorStatusLine(status int) string { return strconv.Itoa(status) + " " + errorTitle(status) }

func noEscape(s string) string { return s }

// htmlEscape is webob's html_escape: quotes escaped, non-ASCII as
// decimal character references.
func htmlEscape(s string) string {
	s = strings.ReplaceAll(html.EscapeString(s), "&#39;", "&#x27;")
	s = strings.ReplaceAll(s, "&#34;", "&quot;")
	var b strings.Builder
	for _, r := range s {
		if r < utf8.RuneSelf {
			b.WriteRune(r)
			continue
		}
		b.WriteString("&#" + strconv.Itoa(int(r)) + ";")
	}
	return b.String()
}

// errorBodyText is webob's body template filled in: the explanation, a
// break, the detail and an empty comment line, with esc applied to the
// variable parts. Raw errors are their own complete text.
func errorBodyText(e *apierror.Error, esc func(string) string) string {
	if e.Raw {
		return e.Detail
	}
	return esc(explanations[e.Status]) + "<br /><br />\n" + esc(e.Detail) + "\n\n"
}

// htmlErrorBody is webob's HTML error page.
func htmlErrorBody(e *apierror.Error) string {
	status := errorStatusLine(e.Status)
	return "<html>\n <head>\n  <title>" + status + "</title>\n </head>\n <body>\n  <h1>" + status + "</h1>\n  " +
		errorBodyText(e, htmlEscape) + "\n </body>\n</html>"
}

var (
	brRE      = regexp.MustCompile(`(?i)<br.*?>`)
	commentRE = regexp.MustCompile(`(?s)<!--|-->`)
	tagRE     = regexp.MustCompile(`(?s)<.*?>`)
)

// stripTags mirrors webob's strip_tags, which upstream's error bodies pass
// through: newlines become spaces and <br> becomes a newline.
func stripTags(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	s = strings.ReplaceAll(s, "\r", "")
	s = brRE.ReplaceAllString(s, "\n")
	s = commentRE.ReplaceAllString(s, "")
	s = tagRE.ReplaceAllString(s, "")
	return s
}

// errorBodyFor renders e in the format the client's Accept header picks,
// as webob does: HTML, plain text, or the JSON that jsonBody builds.
func errorBodyFor(req *Request, e *apierror.Error, jsonBody func() []byte) (body []byte, contentType string) {
	switch errorFormat(req.Header.Values("Accept")) {
	case "html":
		return []byte(htmlErrorBody(e)), "text/html; charset=UTF-8"
	case "plain":
		return []byte(errorStatusLine(e.Status) + "\n\n" + stripTags(errorBodyText(e, noEscape))), "text/plain; charset=UTF-8"
	default:
		return jsonBody(), "application/json"
	}
}

// explanations are webob's standard texts per status, whitespace-normalized
// as webob does at import time; upstream's error detail starts with them.
var explanations = map[int]string{
	400: "The server could not comply with the request since it is either malformed or otherwise incorrect.",
	401: "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.",
	403: "Access was denied to this resource.",
	404: "The resource could not be found.",
	405: "",
	406: "",
	409: "There was a conflict when trying to complete your request.",
	415: "",
	500: "The server has either erred or is incapable of performing the requested operation.",
}

// errorTitle is the HTTP reason phrase webob uses as the title.
func errorTitle(status int) string {
	switch status {
	case 406:
		return "Not Acceptable"
	case 415:
		return "Unsupported Media Type"
	}
	t := http.StatusText(status)
	if t == "" {
		return "Unknown"
	}
	return t
}
