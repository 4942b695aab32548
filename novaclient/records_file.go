package novaclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// novaAuditFileJSON is what the audit reads of a Nova file: besides the
// hypervisors, the answers of GET /servers?all_tenants=1 (with
// &deleted=1 merged in) and GET /os-migrations.
type novaAuditFileJSON struct {
	Servers     *[]novaServerJSON    `json:"servers"`
	Migrations  []novaMigrationJSON  `json:"migrations"`
	Hypervisors []novaHypervisorJSON `json:"hypervisors"`
}

// Records reads them from the file's "servers",
// "migrations" and "hypervisors". A file without "servers" says nothing
// of Nova's instances: that is an error, never a Nova without any (which
// would make every consumer an orphan).
func (f File) Records(ctx context.Context) (Records, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return Records{}, fmt.Errorf("%w: read %s: %w", ErrUnavailable, f.Path, err)
	}
	var doc novaAuditFileJSON
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return Records{}, fmt.Errorf("%w: %s: decode: %w", ErrUnavailable, f.Path, err)
	}
	if doc.Servers == nil {
		return Records{}, fmt.Errorf(`%w: %s holds no "servers": the audit needs Nova's instances`, ErrUnavailable, f.Path)
	}
	v := NewRecords()
	down := 0
	for _, s := range *doc.Servers {
		v.Instances[s.ID] = true
		if s.Status == statusUnknown {
			down++
		}
	}
	if down > 0 {
		v.Partial = append(v.Partial, fmt.Sprintf("%s: %d server(s) listed with status UNKNOWN (their cell does not answer Nova)", f.Path, down))
	}
	for _, m := range doc.Migrations {
		if m.UUID != "" && migrationInProgress(m.Status) {
			v.Migrations[m.UUID] = true
		}
	}
	st, err := novaStateFromJSON(nil, doc.Hypervisors)
	if err != nil {
		return Records{}, fmt.Errorf("%w: %s: %w", ErrUnavailable, f.Path, err)
	}
	for _, node := range st.Nodes {
		v.ComputeNodes[node.UUID] = true
	}
	return v, nil
}

// Both sources read everything.
var (
	_ Source = File{}
	_ Source = (*API)(nil)
)
