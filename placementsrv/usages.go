package placementsrv

func (s *Server) listProviderUsages(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) getTotalUsages(r *request) (*response, error)     { return nil, errNotImplemented }
