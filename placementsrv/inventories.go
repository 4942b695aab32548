package placementsrv

func (s *Server) getInventories(r *request) (*response, error)    { return nil, errNotImplemented }
func (s *Server) createInventory(r *request) (*response, error)   { return nil, errNotImplemented }
func (s *Server) setInventories(r *request) (*response, error)    { return nil, errNotImplemented }
func (s *Server) deleteInventories(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) getInventory(r *request) (*response, error)      { return nil, errNotImplemented }
func (s *Server) updateInventory(r *request) (*response, error)   { return nil, errNotImplemented }
func (s *Server) deleteInventory(r *request) (*response, error)   { return nil, errNotImplemented }
