package pyfmt

import (
	"fmt"
	"unicode/utf8"
)

// UTF8Error words the first invalid sequence of b as Python's UTF-8 codec
// does: "'utf-8' codec can't decode byte 0xff in position 10: invalid
// start byte", or "bytes in position 3-4" when the bad sequence is longer.
func UTF8Error(b []byte) error {
	i := 0
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		end, reason := badSequence(b, i)
		where := fmt.Sprintf("byte 0x%02x in position %d", b[i], i)
		if end-i > 1 {
			where = fmt.Sprintf("bytes in position %d-%d", i, end-1)
		}
		return fmt.Errorf("'utf-8' codec can't decode %s: %s", where, reason)
	}
	return nil
}

// badSequence returns the end of the invalid sequence starting at b[i] and
// CPython's reason for it.
func badSequence(b []byte, i int) (int, string) {
	c := b[i]
	var n int
	lo, hi := byte(0x80), byte(0xbf) // the second byte's range
	switch {
	case c >= 0xc2 && c <= 0xdf:
		n = 2
	case c >= 0xe0 && c <= 0xef:
		n = 3
		if c == 0xe0 {
			lo = 0xa0
		} else if c == 0xed {
			hi = 0x9f
		}
	case c >= 0xf0 && c <= 0xf4:
		n = 4
		if c == 0xf0 {
			lo = 0x90
		} else if c == 0xf4 {
			hi = 0x8f
		}
	default:
		return i + 1, "invalid start byte"
	}
	for k := 1; k < n; k++ {
		if i+k >= len(b) {
			return len(b), "unexpected end of data"
		}
		ok := b[i+k] >= 0x80 && b[i+k] <= 0xbf
		if k == 1 {
			ok = b[i+k] >= lo && b[i+k] <= hi
		}
		if !ok {
			return i + k, "invalid continuation byte"
		}
	}
	return i + n, "invalid continuation byte" // not reached: the sequence was valid
}
