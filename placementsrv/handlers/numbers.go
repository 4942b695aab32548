package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// This file reads and writes JSON numbers as upstream does: integers as
// jsonschema's "integer" admits them, floats in Python's repr.

// pyFloat renders like Python's float repr, so allocation ratios read
// "1.0" rather than "1" as upstream's JSON does.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, fmt.Errorf("cannot encode %v as JSON", v)
	}
	if a := math.Abs(v); a != 0 && (a < 1e-4 || a >= 1e16) {
		return []byte(strconv.FormatFloat(v, 'e', -1, 64)), nil
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return []byte(s), nil
}

// jsonInt reads a JSON integer, accepting an integral float (5.0) as
// Python's jsonschema does.
func jsonInt(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%v is not an integer", v)
	}
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%s is not an integer", n)
	}
	return int64(f), nil
}

// jsonInteger converts a number that validated as a JSON Schema integer
// (which includes floats with no fraction, such as 1.0) to int64; nil
// means it is out of int64's range.
func jsonInteger(n json.Number) *int64 {
	if i, err := n.Int64(); err == nil {
		return &i
	}
	f, _, err := big.ParseFloat(string(n), 10, 256, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return nil
	}
	if i, acc := f.Int64(); acc == big.Exact {
		return &i
	}
	return nil
}

// allocJSONInt reads an integer as jsonschema's "integer" admits it: a whole
// number, possibly written as a float (1.0). Values beyond int64 are
// clamped; they fail every inventory limit anyway.
func allocJSONInt(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, err
	}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, err
	}
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, nil
	case f <= math.MinInt64:
		return math.MinInt64, nil
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%s is not an integer", n)
	}
	return int64(f), nil
}
