package reconciler

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// NovaFile reads Nova's state from a JSON file holding the answers of
// GET /os-aggregates and GET /os-hypervisors/detail (microversion >=
// 2.53) merged into one object: {"aggregates": [...], "hypervisors":
// [...]}. The file is re-read on every run.
type NovaFile struct {
	Path string
}

// NovaState implements NovaSource.
func (f NovaFile) NovaState(ctx context.Context) (NovaState, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: read %s: %w", ErrNovaUnavailable, f.Path, err)
	}
	st, err := decodeNovaFile(data)
	if err != nil {
		return NovaState{}, fmt.Errorf("%w: %s: %w", ErrNovaUnavailable, f.Path, err)
	}
	return st, nil
}

func decodeNovaFile(data []byte) (NovaState, error) {
	var doc novaFileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return NovaState{}, fmt.Errorf("decode: %w", err)
	}
	if doc.Aggregates == nil && doc.Hypervisors == nil {
		return NovaState{}, fmt.Errorf(`neither "aggregates" nor "hypervisors" present`)
	}
	return novaStateFromJSON(doc.Aggregates, doc.Hypervisors)
}
