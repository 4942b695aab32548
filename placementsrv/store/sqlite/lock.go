package sqlite

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked means another process holds the database: the ledger keeps
// every record in memory and is the one writer, so a second process on
// the same file would serve stale reads and fail on conflicting writes.
var ErrLocked = errors.New("database is in use by another process")

// fileLock is an exclusive flock on <database>.lock, which holds the
// holder's PID. The kernel drops the lock when its holder exits, however
// it exits, so a kill -9 leaves no stale lock behind (only a stale PID in
// the file, which the next holder overwrites).
type fileLock struct{ f *os.File }

// lockDatabase takes the lock of the database at path without waiting.
func lockDatabase(path string) (*fileLock, error) {
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open database %s: lock file: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := readHolder(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("database %s is in use by process %s (lock file %s); stop it before starting another: %w", path, holder, name, ErrLocked)
		}
		return nil, fmt.Errorf("open database %s: lock %s: %w", path, name, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open database %s: write lock file %s: %w", path, name, err)
	}
	return &fileLock{f: f}, nil
}

// readHolder is the PID written in the lock file, or "unknown".
func readHolder(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
		return strconv.Itoa(pid)
	}
	return "unknown"
}

// release drops the lock; the file stays, for the next holder.
func (l *fileLock) release() error { return l.f.Close() }
