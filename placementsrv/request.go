package placementsrv

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/policy"
	"github.com/placement-syncd/placement-syncd/placementsrv/schema"
)

// maxBodyBytes bounds request bodies; the largest legitimate bodies (POST
// /allocations for a rack of instances, reshaper) are far smaller.
const maxBodyBytes = 64 << 20

// request carries one HTTP request and what middleware learnt about it.
type request struct {
	*http.Request
	srv    *Server
	id     string
	mv     microversion.Version
	mvSet  bool
	params map[string]string
	route  *route // set by dispatch once matched
	// errCode is the Placement error code of an error answer.
	errCode string
	// creds are the caller's policy credentials, from the auth middleware.
	creds policy.Credentials
}

// param returns a path parameter by its route name.
func (r *request) param(name string) string { return r.params[name] }

// minor is the negotiated microversion's minor number (all are 1.x), as
// the schema accessors take it.
func (r *request) minor() int { return r.mv.Minor }

// at reports whether the negotiated microversion is at least v.
func (r *request) at(v microversion.Version) bool { return r.mv.AtLeast(v) }

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return "req-" + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// negotiate picks the microversion from OpenStack-API-Version, as
// microversion_parse does: the last "placement X.Y" entry wins, no header
// means 1.0, "latest" means the maximum; malformed is 400, unsupported 406.
func (r *request) negotiate() *apierror.Error {
	value := ""
	if hv := r.Header.Values("Openstack-Api-Version"); len(hv) > 0 {
		parts := strings.Split(strings.Join(hv, ","), ",")
		for i := len(parts) - 1; i >= 0; i-- {
			fields := strings.Fields(parts[i])
			if len(fields) < 2 {
				continue
			}
			if strings.EqualFold(fields[0], "placement") {
				_, rest, _ := strings.Cut(strings.TrimSpace(parts[i]), fields[0])
				value = strings.TrimSpace(rest)
				break
			}
		}
	}
	if value == "" {
		value = microversion.Min.String()
	}
	if value == "latest" {
		value = r.maxVersion().String()
	}
	v, err := parseLooseVersion(value)
	if err != nil {
		return apierror.BadRequest("Invalid microversion: invalid version string: %s; %s", value, err)
	}
	if !v.Supported() || r.maxVersion().Less(v) {
		accept := r.Header.Get("Accept")
		if accept == "" || accept == "*/*" {
			accept = "application/json"
		}
		return &apierror.Error{
			Status: http.StatusNotAcceptable,
			Raw:    true,
			Detail: "The resource could not be generated that was acceptable to your browser\n(content of type " + accept + ". <br /><br />\nInvalid microversion: Unacceptable version header: " + value,
		}
	}
	r.mv, r.mvSet = v, true
	return nil
}

// parseLooseVersion accepts what Python's int() accepts around each part
// (surrounding whitespace), and reports errors in Python's words.
func parseLooseVersion(s string) (microversion.Version, error) {
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return microversion.Version{}, errors.New("not enough values to unpack (expected 2, got 1)")
	}
	x, err := pyInt(maj)
	if err != nil {
		return microversion.Version{}, err
	}
	y, err := pyInt(min)
	if err != nil {
		return microversion.Version{}, err
	}
	return microversion.Version{Major: x, Minor: y}, nil
}

func pyInt(s string) (int, error) {
	t := strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, fmt.Errorf("invalid literal for int() with base 10: '%s'", s)
	}
	n := 0
	for _, c := range t {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("invalid literal for int() with base 10: '%s'", s)
		}
		n = n*10 + int(c-'0')
		if n > 1<<40 {
			return 0, fmt.Errorf("invalid literal for int() with base 10: '%s'", s)
		}
	}
	if neg {
		n = -n
	}
	return n, nil
}

// requireJSON enforces Content-Type: application/json like upstream's
// require_content decorator (415 otherwise).
func (r *request) requireJSON() *apierror.Error {
	ct := r.Header.Get("Content-Type")
	mt := ""
	if ct != "" {
		if m, _, err := mime.ParseMediaType(ct); err == nil {
			mt = m
		} else {
			mt = strings.TrimSpace(strings.SplitN(ct, ";", 2)[0])
		}
	}
	if mt == "application/json" {
		return nil
	}
	if mt == "" {
		mt = "None"
	}
	return &apierror.Error{
		Status: http.StatusUnsupportedMediaType,
		Code:   apierror.CodeDefault,
		Raw:    true,
		Detail: "The request media type " + mt + " is not supported by this server.\n<br /><br />\nThe media type " + mt + " is not supported, use application/json",
	}
}

// checkAccept mirrors upstream's check_accept: an explicit Accept that does
// not admit application/json is a 406.
func (r *request) checkAccept() *apierror.Error {
	accept := r.Header.Get("Accept")
	if accept == "" || acceptsJSON(accept) {
		return nil
	}
	return &apierror.Error{
		Status: http.StatusNotAcceptable,
		Code:   apierror.CodeDefault,
		Raw:    true,
		Detail: "The resource could not be generated that was acceptable to your browser\n(content of type " + accept + ". <br /><br />\nOnly application/json is provided",
	}
}

func acceptsJSON(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		if strings.Contains(strings.ReplaceAll(params, " ", ""), "q=0") && !strings.Contains(params, "q=0.") {
			continue
		}
		switch mt {
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

// decodeJSON requires a JSON content type, reads the body, decodes it with
// numbers kept exact, and validates it against sch (when non-nil). The
// errors are upstream's: 415, "Malformed JSON: ..." and "JSON does not
// validate: ...".
func (r *request) decodeJSON(sch *schema.Schema) (any, error) {
	if herr := r.requireJSON(); herr != nil {
		return nil, herr
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if len(body) > maxBodyBytes {
		return nil, apierror.Errorf(http.StatusRequestEntityTooLarge, "request body too large")
	}
	doc, err := parseJSON(body)
	if err != nil {
		return nil, apierror.BadRequest("Malformed JSON: %s", err)
	}
	if sch != nil {
		// ValidateJSON re-reads the body to keep key order, which decides
		// the wording of some messages exactly as upstream's.
		if err := sch.ValidateJSON(body); err != nil {
			return nil, apierror.BadRequest("JSON does not validate: %s", err)
		}
	}
	return doc, nil
}

// parseJSON decodes exactly one JSON value with numbers as json.Number.
func parseJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("Expecting value: line 1 column 1 (char 0)")
		}
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("Extra data")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("Extra data")
	}
	return doc, nil
}

// remarshal converts a validated generic document into a typed struct.
func remarshal(doc any, out any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(out)
}
