package placementsrv

func (s *Server) reshape(r *request) (*response, error) { return nil, errNotImplemented }
