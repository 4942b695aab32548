package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
)

// negotiate picks the microversion from OpenStack-API-Version, as
// microversion_parse does: the last "placement X.Y" entry wins, no header
// means 1.0, "latest" means the maximum; malformed is 400, unsupported 406.
func (r *Request) negotiate() *apierror.Error {
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
		value = r.MaxVersion().String()
	}
	v, err := parseLooseVersion(value)
	if err != nil {
		return apierror.BadRequest("Invalid microversion: invalid version string: %s; %s", value, err)
	}
	if !v.Supported() || r.MaxVersion().Less(v) {
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
	r.Version, r.Negotiated = v, true
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

// MaxVersion is the highest microversion this request may negotiate.
func (r *Request) MaxVersion() microversion.Version {
	if r.chain == nil || r.chain.opts.MaxMicroversion == (microversion.Version{}) {
		return microversion.Max
	}
	return r.chain.opts.MaxMicroversion
}
