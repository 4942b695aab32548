package candidates

import (
	"bytes"
	"errors"
	"testing"
)

// failAfter accepts n writes, then fails every one.
type failAfter struct {
	n   int
	got bytes.Buffer
}

var errGone = errors.New("client gone")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errGone
	}
	f.n--
	return f.got.Write(p)
}

// TestChunkPipe: chunks arrive in order and whole; after a failed write
// the renderer is told at its next hand-over, close reports the error,
// and nothing blocks.
func TestChunkPipe(t *testing.T) {
	t.Run("in order", func(t *testing.T) {
		w := &failAfter{n: 100}
		p := newChunkPipe(w, &bufferPool{})
		var want bytes.Buffer
		b := []byte{}
		for i := 0; i < 20; i++ {
			b = append(b, bytes.Repeat([]byte{byte('a' + i)}, 1000+i)...)
			want.Write(b)
			var err error
			if b, err = p.swap(b); err != nil {
				t.Fatal(err)
			}
			if len(b) != 0 {
				t.Fatalf("swap returned %d bytes, want an empty buffer", len(b))
			}
		}
		if err := p.close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(w.got.Bytes(), want.Bytes()) {
			t.Fatalf("written %d bytes, want %d in order", w.got.Len(), want.Len())
		}
		if err := p.close(); err != nil {
			t.Fatalf("second close: %v", err)
		}
	})
	t.Run("write fails", func(t *testing.T) {
		p := newChunkPipe(&failAfter{n: 2}, &bufferPool{})
		var err error
		b := []byte("x")
		for i := 0; i < 10 && err == nil; i++ {
			b, err = p.swap(append(b, 'y'))
		}
		if !errors.Is(err, errGone) {
			t.Fatalf("swap after a failed write: %v, want %v", err, errGone)
		}
		if err := p.close(); !errors.Is(err, errGone) {
			t.Fatalf("close: %v, want %v", err, errGone)
		}
	})
	t.Run("never started", func(t *testing.T) {
		if err := newChunkPipe(&failAfter{}, &bufferPool{}).close(); err != nil {
			t.Fatal(err)
		}
	})
}
