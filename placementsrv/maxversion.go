package placementsrv

import (
	"fmt"

	"github.com/placement-syncd/placement-syncd/placementsrv/microversion"
)

// capMicroversion sets the highest microversion the server offers; the
// zero value means microversion.Max.
func (s *Server) capMicroversion(v microversion.Version) error {
	if v == (microversion.Version{}) {
		s.maxMV = microversion.Max
		return nil
	}
	if !v.Supported() {
		return fmt.Errorf("placementsrv: MaxMicroversion %s is outside %s–%s", v, microversion.Min, microversion.Max)
	}
	s.maxMV = v
	return nil
}

// maxVersion is the highest microversion this request may negotiate.
func (r *request) maxVersion() microversion.Version {
	if r.srv == nil || r.srv.maxMV == (microversion.Version{}) {
		return microversion.Max
	}
	return r.srv.maxMV
}
