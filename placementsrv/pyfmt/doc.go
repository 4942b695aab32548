// Package pyfmt words errors as Placement's Python does, for answers that
// must match the reference byte for byte: json.loads's decode errors,
// int()'s parse errors and str.__repr__; and it reproduces the iteration
// order of CPython's sets (Set), which decides some of Placement's answers
// and the order of names in its messages. It is a leaf: it knows nothing
// of HTTP or of Placement's resources.
package pyfmt
