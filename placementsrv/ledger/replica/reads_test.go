package replica

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFeedReadsBeginAfterCallers: a caller that arrives while a read is
// under way is not served by it (it may miss a write acknowledged just
// before the caller arrived) but by the next, which all such callers
// share; its error reaches every one of them.
func TestFeedReadsBeginAfterCallers(t *testing.T) {
	f := newFeedReads()
	var reads atomic.Int32
	inFirst, releaseFirst := make(chan struct{}), make(chan struct{})
	errSecond := errors.New("second read")
	read := func(context.Context) (func() error, error) {
		switch reads.Add(1) {
		case 1:
			close(inFirst)
			<-releaseFirst
			return nil, nil
		default:
			return nil, errSecond
		}
	}
	first := make(chan error, 1)
	go func() { first <- f.do(context.Background(), read) }()
	<-inFirst
	// Three callers arrive while the first read is under way.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.do(context.Background(), read)
		}()
	}
	waitJoined(f, 3)
	close(releaseFirst)
	if err := <-first; err != nil {
		t.Fatalf("first caller: %v", err)
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, errSecond) {
			t.Errorf("caller %d got %v, want the second read's error", i, err)
		}
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d reads, want 2: the first, and one shared by the three callers that came during it", n)
	}
}

// waitJoined waits until n callers joined the round that has not begun.
func waitJoined(f *feedReads, n int) {
	for {
		f.mu.Lock()
		joined := f.next != nil && f.next.callers == n
		f.mu.Unlock()
		if joined {
			return
		}
		runtime.Gosched()
	}
}

// TestFeedReadsCallerLeaves: a caller that is not leading returns when
// its context ends; the round goes on for the others.
func TestFeedReadsCallerLeaves(t *testing.T) {
	f := newFeedReads()
	inFirst, releaseFirst := make(chan struct{}), make(chan struct{})
	var reads atomic.Int32
	read := func(context.Context) (func() error, error) {
		if reads.Add(1) == 1 {
			close(inFirst)
			<-releaseFirst
		}
		return nil, nil
	}
	first := make(chan error, 1)
	go func() { first <- f.do(context.Background(), read) }()
	<-inFirst
	second := make(chan error, 1)
	go func() { second <- f.do(context.Background(), read) }()
	waitJoined(f, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.do(ctx, read); !errors.Is(err, context.Canceled) {
		t.Fatalf("a caller whose context ended got %v, want context.Canceled", err)
	}
	close(releaseFirst)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if n := reads.Load(); n != 2 {
		t.Fatalf("%d reads, want 2", n)
	}
}

// TestFeedReadsReadDuringApply: the next round reads while the one before
// applies (an apply waits for the writers' lock; the read need not), and
// each caller returns only after its own round's apply.
func TestFeedReadsReadDuringApply(t *testing.T) {
	f := newFeedReads()
	applying, releaseApply := make(chan struct{}), make(chan struct{})
	secondRead := make(chan struct{})
	var reads atomic.Int32
	read := func(context.Context) (func() error, error) {
		if reads.Add(1) == 1 {
			return func() error {
				close(applying)
				<-releaseApply
				return nil
			}, nil
		}
		close(secondRead)
		return func() error { return nil }, nil
	}
	first := make(chan error, 1)
	go func() { first <- f.do(context.Background(), read) }()
	<-applying
	second := make(chan error, 1)
	go func() { second <- f.do(context.Background(), read) }()
	<-secondRead // read while the first round still applies
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first caller returned (%v) before its apply ended", err)
	default:
	}
	close(releaseApply)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
}
