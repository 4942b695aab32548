package placementsrv

func (s *Server) getAggregates(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) setAggregates(r *request) (*response, error) { return nil, errNotImplemented }
