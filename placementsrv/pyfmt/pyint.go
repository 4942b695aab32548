package pyfmt

import (
	"fmt"
	"math/big"
	"strings"
)

// Int parses s as int(s) does for text that came from Latin-1 (an HTTP
// header under WSGI): surrounding whitespace, one sign, ASCII digits (the
// only decimal digits Latin-1 has) with single underscores between them,
// any size. Its error reads as int()'s ValueError.
func Int(s string) (*big.Int, error) {
	t := strings.TrimFunc(s, IsSpace)
	if t != "" && (t[0] == '-' || t[0] == '+') {
		t = t[1:]
	}
	digits := make([]byte, 0, len(t))
	prevDigit := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			prevDigit = true
		case c == '_' && prevDigit:
			prevDigit = false
		default:
			return nil, intError(s)
		}
	}
	if len(digits) == 0 || !prevDigit {
		return nil, intError(s)
	}
	n, _ := new(big.Int).SetString(string(digits), 10)
	if t0 := strings.TrimFunc(s, IsSpace); t0[0] == '-' {
		n.Neg(n)
	}
	return n, nil
}

func intError(s string) error {
	return fmt.Errorf("invalid literal for int() with base 10: %s", Repr(s))
}

// Latin1 reads raw bytes as Latin-1, as WSGI hands HTTP headers and the
// request path to Python: each byte is the character of that number.
func Latin1(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		b.WriteRune(rune(raw[i]))
	}
	return b.String()
}
