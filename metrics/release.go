package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// APIRelease is the Placement release 'serve' follows and how it came
// to it. build_info stays the binary's alone (the agent shares it and
// has no release); these labels are the configuration's.
type APIRelease struct {
	// Release is api.release's value, Source "config" when the
	// configuration names it and "default" when it is the binary's.
	Release, Source                  string
	EnforceScope, EnforceNewDefaults bool
	// Remembered is the release the database was last served under
	// ("" when it recorded none); Changed is true when the release
	// changed by default since (the start-up warning).
	Remembered string
	Changed    bool
}

// RegisterAPIRelease registers placement_syncd_api_release_info (value 1,
// the release and the enforcement flags in its labels) and
// placement_syncd_api_release_changed (1 while the release served
// differs, by default, from the one the database was last served under;
// its labels name both).
func RegisterAPIRelease(reg prometheus.Registerer, r APIRelease) error {
	s := NewSet("api")
	info := s.GaugeVec("release_info", "A metric with a constant value of 1, labeled by the Placement release the API follows (api.release), "+
		"whether the configuration names it (source config) or it is the binary's default, and the effective enforce_scope and enforce_new_defaults.",
		"release", "source", "enforce_scope", "enforce_new_defaults")
	changed := s.GaugeVec("release_changed", "1 when the Placement release served differs from the one the database was last served under "+
		"and the configuration does not name api.release (from: the remembered release, unknown when the database recorded none; to: the release served), else 0.",
		"from", "to")
	if err := s.Register(reg); err != nil {
		return err
	}
	info.WithLabelValues(r.Release, r.Source, strconv.FormatBool(r.EnforceScope), strconv.FormatBool(r.EnforceNewDefaults)).Set(1)
	from := r.Remembered
	if from == "" {
		from = "unknown"
	}
	v := 0.0
	if r.Changed {
		v = 1
	}
	changed.WithLabelValues(from, r.Release).Set(v)
	return nil
}
