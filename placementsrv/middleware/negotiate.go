package middleware

import (
	"errors"
	"math/big"
	"net/http"
	"strings"

	"github.com/placement-syncd/placement-syncd/microversion"
	"github.com/placement-syncd/placement-syncd/placementsrv/apierror"
	"github.com/placement-syncd/placement-syncd/placementsrv/pyfmt"
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
	// Python reads the header as Latin-1, and its messages show it so.
	value = pyfmt.Latin1(value)
	v, err := parseHeaderVersion(value)
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

// parseHeaderVersion reads the OpenStack-API-Version header's version
// as microversion_parse's parse_version_string does: int() of each side
// of the first '.', in Python's words, and a lone number is the Version
// tuple's missing argument. A number too large for a version becomes one
// that is not supported (406, as upstream). It is not microversion.Parse
// because it accepts what Python's int() accepts (spaces, signs, "1_0")
// and fails with Python's messages, which the 400 answer quotes.
func parseHeaderVersion(s string) (microversion.Version, error) {
	maj, min, ok := strings.Cut(s, ".")
	x, err := pyfmt.Int(maj)
	if err != nil {
		return microversion.Version{}, err
	}
	if !ok {
		return microversion.Version{}, errors.New("Version.__new__() missing 1 required positional argument: 'minor'")
	}
	y, err := pyfmt.Int(min)
	if err != nil {
		return microversion.Version{}, err
	}
	return microversion.Version{Major: clampInt(x), Minor: clampInt(y)}, nil
}

// clampInt keeps the sign of n within a version's range: any number
// beyond it is as unsupported as the bound.
func clampInt(n *big.Int) int {
	const bound = 1 << 30
	switch {
	case n.IsInt64() && n.Int64() > -bound && n.Int64() < bound:
		return int(n.Int64())
	case n.Sign() < 0:
		return -bound
	}
	return bound
}

// MaxVersion is the highest microversion this request may negotiate.
func (r *Request) MaxVersion() microversion.Version {
	if r.chain == nil || r.chain.opts.MaxMicroversion == (microversion.Version{}) {
		return microversion.Max
	}
	return r.chain.opts.MaxMicroversion
}
