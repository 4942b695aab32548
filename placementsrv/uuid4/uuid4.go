// Package uuid4 makes random (version 4) uuids in canonical form, for new
// resource providers and request ids.
package uuid4

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a random version 4 uuid, lower-case with dashes.
func New() string { return NewWithPrefix("") }

// NewWithPrefix returns prefix followed by New's uuid, joined in the same
// concatenation as the uuid's groups (a request id is made for every
// request, so no second string is built for the prefix).
func NewWithPrefix(prefix string) string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = (u[6] & 0x0f) | 0x40
	u[8] = (u[8] & 0x3f) | 0x80
	h := hex.EncodeToString(u[:])
	return prefix + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
