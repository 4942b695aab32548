package novaclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
)

// File reads Nova's state from a JSON file holding the answers of
// GET /os-aggregates and GET /os-hypervisors/detail (microversion >=
// 2.53) merged into one object: {"aggregates": [...], "hypervisors":
// [...]}. The file is re-read on every run.
type File struct {
	Path string
}

// State implements Source.
func (f File) State(ctx context.Context) (State, error) {
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return State{}, fmt.Errorf("%w: read %s: %w", ErrUnavailable, f.Path, err)
	}
	st, err := decodeNovaFile(data)
	if err != nil {
		return State{}, fmt.Errorf("%w: %s: %w", ErrUnavailable, f.Path, err)
	}
	return st, nil
}

func decodeNovaFile(data []byte) (State, error) {
	var doc novaFileJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return State{}, fmt.Errorf("decode: %w", err)
	}
	if doc.Aggregates == nil && doc.Hypervisors == nil {
		return State{}, fmt.Errorf(`neither "aggregates" nor "hypervisors" present`)
	}
	return novaStateFromJSON(doc.Aggregates, doc.Hypervisors)
}
