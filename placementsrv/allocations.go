package placementsrv

func (s *Server) listProviderAllocations(r *request) (*response, error) {
	return nil, errNotImplemented
}
func (s *Server) postAllocations(r *request) (*response, error)        { return nil, errNotImplemented }
func (s *Server) getConsumerAllocations(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) putConsumerAllocations(r *request) (*response, error) { return nil, errNotImplemented }
func (s *Server) deleteConsumerAllocations(r *request) (*response, error) {
	return nil, errNotImplemented
}
