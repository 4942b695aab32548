package placementsrv

func (s *Server) listResourceClasses(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) createResourceClass(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) getResourceClass(r *request) (*response, error)    { return nil, errNotImplemented }
func (s *Server) updateResourceClass(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) deleteResourceClass(r *request) (*response, error) { return nil, errNotImplemented }
