package placementsrv

func (s *Server) listTraits(r *request) (*response, error)           { return nil, errNotImplemented }
func (s *Server) getTrait(r *request) (*response, error)             { return nil, errNotImplemented }
func (s *Server) putTrait(r *request) (*response, error)             { return nil, errNotImplemented }
func (s *Server) deleteTrait(r *request) (*response, error)          { return nil, errNotImplemented }
func (s *Server) listProviderTraits(r *request) (*response, error)   { return nil, errNotImplemented }
func (s *Server) setProviderTraits(r *request) (*response, error)    { return nil, errNotImplemented }
func (s *Server) deleteProviderTraits(r *request) (*response, error) { return nil, errNotImplemented }
