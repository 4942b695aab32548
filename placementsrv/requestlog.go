package placementsrv

// loggedMicroversion is the negotiated microversion for the request log
// line, or "" when the request ended before negotiation (a 401) or
// negotiation failed (400, 406): "0.0" would read as a version.
func (r *request) loggedMicroversion() string {
	if !r.mvSet {
		return ""
	}
	return r.mv.String()
}
