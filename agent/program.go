package agent

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
)

// Programmer is a driver whose devices can be programmed (drivers/fpga).
type Programmer interface {
	drivers.Driver
	DeviceProvider(device string) (string, error)
	BeginProgramming(device string) (prev string, err error)
	AbortProgramming(device, prev string)
	Program(ctx context.Context, device, image string) (function string, err error)
}

// ErrDeviceInUse: the device has allocations and force was not given.
var ErrDeviceInUse = errors.New("device has allocations")

// ErrNoProgrammer: no configured driver programs devices.
var ErrNoProgrammer = errors.New("no driver programs devices")

// ProgramResult is the outcome of one programming request.
type ProgramResult struct {
	Device   string `json:"device"`
	Provider string `json:"provider,omitempty"`
	Image    string `json:"image"`
	// Result is success, failure, timeout or refused.
	Result   string `json:"result"`
	Function string `json:"function,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Program programs a device: refuse if it has allocations (unless force),
// reserve its whole inventory (generation-checked), run the driver's
// command, then sync again, which on success swaps the function trait in
// one PUT and releases the reservation, and on failure or timeout leaves
// the device reserved and reported failed.
func (a *Agent) Program(ctx context.Context, device, image string, force bool) (ProgramResult, error) {
	res := ProgramResult{Device: device, Image: image}
	prog := a.programmer()
	if prog == nil {
		return res, ErrNoProgrammer
	}
	uuid, err := prog.DeviceProvider(device)
	if err != nil {
		return res, err
	}
	res.Provider = uuid
	u, err := a.pc.GetUsages(ctx, uuid)
	if err != nil {
		return res, fmt.Errorf("read usages of %s: %w", device, err)
	}
	for rc, n := range u.Usages {
		if n > 0 && !force {
			res.Result = "refused"
			a.metrics.programs.WithLabelValues(res.Result).Inc()
			return res, fmt.Errorf("%w: %d %s allocated on %s (use force to program anyway)", ErrDeviceInUse, n, rc, device)
		}
	}

	prev, err := prog.BeginProgramming(device)
	if err != nil {
		return res, err
	}
	if r := a.syncOne(ctx, prog); r.Err != nil {
		prog.AbortProgramming(device, prev)
		return res, fmt.Errorf("reserve %s before programming: %w", device, r.Err)
	}
	a.log.Info("programming device", zap.String("device", device), zap.String("image", image), zap.Bool("force", force))
	fn, perr := prog.Program(ctx, device, image)
	// Sync in either case: success releases with the new function trait,
	// failure keeps the reservation and the failed state.
	r := a.syncOne(ctx, prog)
	switch {
	case perr != nil && isTimeout(perr):
		res.Result, res.Error = "timeout", perr.Error()
	case perr != nil:
		res.Result, res.Error = "failure", perr.Error()
	default:
		res.Result, res.Function = "success", fn
	}
	a.metrics.programs.WithLabelValues(res.Result).Inc()
	a.updateFailedDevices(prog)
	if perr != nil {
		return res, perr
	}
	if r.Err != nil {
		return res, fmt.Errorf("programmed %s but Placement is not updated yet (next pass retries): %w", device, r.Err)
	}
	return res, nil
}

// timeoutError is how a driver says a run timed out.
type timeoutError interface{ Timeout() bool }

func isTimeout(err error) bool {
	var te timeoutError
	return errors.As(err, &te) && te.Timeout()
}

func (a *Agent) programmer() Programmer {
	for _, d := range a.opts.Drivers {
		if p, ok := d.(Programmer); ok {
			return p
		}
	}
	return nil
}

// syncOne runs one driver's pass, serialized with full passes.
func (a *Agent) syncOne(ctx context.Context, d drivers.Driver) Result {
	a.passMu.Lock()
	defer a.passMu.Unlock()
	return a.syncDriver(ctx, d)
}

// statuser is a driver that reports per-device states.
type statuser interface {
	FailedDevices() int
}

func (a *Agent) updateFailedDevices(p Programmer) {
	if s, ok := p.(statuser); ok {
		a.metrics.devicesFailed.Set(float64(s.FailedDevices()))
	}
}
