package fpga

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/placement-syncd/placement-syncd/internal/atomicfile"
	"go.uber.org/zap"
)

// The programming state of a device that failed, timed out or was being
// programmed when the agent stopped is kept in Options.StateFile, on the
// host, rather than in Placement: it is a fact about the device on this
// host that only this host's agent acts on, drivers never read Placement,
// and the file is there before Placement is reachable, so the first pass
// after a restart already reserves the device. The reservation itself is
// what Placement shows.

// stateRecord is one device's kept state.
type stateRecord struct {
	State string    `json:"state"`
	Error string    `json:"error,omitempty"`
	At    time.Time `json:"at"`
}

type stateDoc struct {
	Devices map[string]stateRecord `json:"devices"`
}

// loadState reads the kept states: a device left "programming" (the agent
// stopped mid-run) is failed, since its image is unknown.
func (d *Driver) loadState() error {
	if d.opts.StateFile == "" {
		return nil
	}
	b, err := os.ReadFile(d.opts.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fpga: read state file: %w", err)
	}
	var doc stateDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("fpga: read state file %s: %w", d.opts.StateFile, err)
	}
	for bdf, r := range doc.Devices {
		if r.State == StateProgramming {
			r.State, r.Error = StateFailed, "the agent stopped while programming (since "+r.At.Format(time.RFC3339)+")"
		}
		if r.State == StateFailed {
			d.state[bdf], d.errMsg[bdf] = StateFailed, r.Error
			d.since[bdf] = r.At
		}
	}
	return nil
}

// saveState writes every device not ready (guarded by d.mu), atomically.
func (d *Driver) saveState() error {
	if d.opts.StateFile == "" {
		return nil
	}
	doc := stateDoc{Devices: map[string]stateRecord{}}
	for bdf, st := range d.state {
		if st == StateFailed || st == StateProgramming {
			doc.Devices[bdf] = stateRecord{State: st, Error: d.errMsg[bdf], At: d.since[bdf]}
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(d.opts.StateFile, b); err != nil {
		return fmt.Errorf("fpga: write state file: %w", err)
	}
	return nil
}

// setState changes a device's state in memory and keeps it in the state
// file (guarded by d.mu); the error is the file's.
func (d *Driver) setState(bdf, st, msg string) error {
	d.state[bdf] = st
	if msg == "" {
		delete(d.errMsg, bdf)
	} else {
		d.errMsg[bdf] = msg
	}
	if st == StateReady || st == "" {
		delete(d.since, bdf)
	} else {
		d.since[bdf] = time.Now().UTC()
	}
	return d.saveState()
}

// ErrNotFailed: ClearFailed on a device that is not failed.
var ErrNotFailed = errors.New("device is not failed")

// ClearFailed is the operator's command that releases a failed device
// without programming it (the operator vouches for it); only this or a
// successful programming clears a failure.
func (d *Driver) ClearFailed(bdf string) error {
	bdf = strings.ToLower(bdf)
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.state[bdf]; st != StateFailed {
		return fmt.Errorf("%w: %s (state %q)", ErrNotFailed, bdf, cmp.Or(st, StateReady))
	}
	d.log.Info("failed state cleared by the operator", zap.String("device", bdf), zap.String("error", d.errMsg[bdf]))
	return d.setState(bdf, StateReady, "")
}
