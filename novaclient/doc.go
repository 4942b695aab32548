// Package novaclient reads Nova: the compute API (API, pinned to
// Microversion, every list paged and refused unless it is a list), a
// file of its answers (File), and the cell and API databases, read only
// (CellDatabases, with the MySQL driver). Each gives Nova's aggregates
// and compute nodes (State), its nova-compute services (Computes) and
// the records that hold allocations in Placement (Records); the API and
// the file also give the flavors with their extra specs (Flavors).
// Settings say which to open (Open, OpenComputes), with clouds.yaml entries read
// through internal/cloudsyaml.
//
// Every failure to read Nova wraps ErrUnavailable. The package knows
// none of its users: the reconciler declares the interfaces it consumes,
// as the agent declares drivers.Driver.
package novaclient
