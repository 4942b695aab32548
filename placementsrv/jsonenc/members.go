package jsonenc

import (
	"encoding/json"
	"errors"
)

// EachMember walks the members of the object whose '{' dec has just
// returned, in document order (the order a Python dict keeps, in which
// upstream reports the first offender): it reads each key and calls fn,
// which must consume the member's value. It stops before the closing '}'.
func EachMember(dec *json.Decoder, fn func(key string) error) error {
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("expected an object key")
		}
		if err := fn(key); err != nil {
			return err
		}
	}
	return nil
}
