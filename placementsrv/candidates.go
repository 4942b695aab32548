package placementsrv

func (s *Server) listAllocationCandidates(r *request) (*response, error) {
	return nil, errNotImplemented
}
