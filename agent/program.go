package agent

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/drivers"
)

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
// reserve its whole inventory (generation-checked), check the usages
// again against the reservation's generation (an allocation that landed
// before the reservation took hold aborts and releases it), run the
// driver's command, then sync again, which on success swaps the function
// trait in one PUT and releases the reservation, and on failure or
// timeout leaves the device reserved and reported failed.
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
	// A first look, so that a device in use is refused without a write.
	u, err := a.pc.GetUsages(ctx, uuid)
	if err != nil {
		return res, fmt.Errorf("read usages of %s: %w", device, err)
	}
	if err := usedErr(u.Usages, device, force); err != nil {
		return a.refused(res, err)
	}

	prev, err := prog.BeginProgramming(device)
	if err != nil {
		return res, err
	}
	if r := a.syncOne(ctx, prog); r.Err != nil {
		prog.AbortProgramming(device, prev)
		return res, fmt.Errorf("reserve %s before programming: %w", device, r.Err)
	}
	if err := a.checkReserved(ctx, uuid, device, force); err != nil {
		prog.AbortProgramming(device, prev)
		r := a.syncOne(ctx, prog) // release the reservation
		if errors.Is(err, ErrDeviceInUse) {
			res, err = a.refused(res, err)
		}
		return res, errors.Join(err, r.Err)
	}
	return a.runProgram(ctx, prog, res, force)
}

// runProgram runs the driver's command on a reserved device and syncs the
// outcome.
func (a *Agent) runProgram(ctx context.Context, prog drivers.Programmer, res ProgramResult, force bool) (ProgramResult, error) {
	device, image := res.Device, res.Image
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

// refused counts and reports a refusal.
func (a *Agent) refused(res ProgramResult, err error) (ProgramResult, error) {
	res.Result = "refused"
	a.metrics.programs.WithLabelValues(res.Result).Inc()
	return res, err
}

func usedErr(usages map[string]int, device string, force bool) error {
	for rc, n := range usages {
		if n > 0 && !force {
			return fmt.Errorf("%w: %d %s allocated on %s (use force to program anyway)", ErrDeviceInUse, n, rc, device)
		}
	}
	return nil
}

// checkReserved checks, after the reservation was written, that it holds
// (every inventory reserved in full) and that the usages read at that very
// generation are none: once it holds no allocation can land, so one that
// landed before it is caught here. Another generation means the provider
// changed in between: the check is not trusted.
func (a *Agent) checkReserved(ctx context.Context, uuid, device string, force bool) error {
	inv, err := a.pc.GetInventories(ctx, uuid)
	if err != nil {
		return fmt.Errorf("read inventories of %s: %w", device, err)
	}
	for rc, i := range inv.Inventories {
		if i.Reserved < i.Total {
			return fmt.Errorf("reservation of %s not in force: %s reserved %d of %d", device, rc, i.Reserved, i.Total)
		}
	}
	u, err := a.pc.GetUsages(ctx, uuid)
	if err != nil {
		return fmt.Errorf("read usages of %s: %w", device, err)
	}
	if u.Generation != inv.Generation {
		return fmt.Errorf("%s changed while its reservation was checked (generation %d, then %d)", device, inv.Generation, u.Generation)
	}
	return usedErr(u.Usages, device, force)
}

// timeoutError is how a driver says a run timed out.
type timeoutError interface{ Timeout() bool }

func isTimeout(err error) bool {
	var te timeoutError
	return errors.As(err, &te) && te.Timeout()
}

func (a *Agent) programmer() drivers.Programmer {
	for _, d := range a.opts.Drivers {
		if p, ok := d.(drivers.Programmer); ok {
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

func (a *Agent) updateFailedDevices(p drivers.Programmer) {
	if s, ok := p.(statuser); ok {
		a.metrics.devicesFailed.Set(float64(s.FailedDevices()))
	}
}

// clearer is a programmer whose failed state the operator can clear.
type clearer interface {
	ClearFailed(device string) error
}

// ClearFailed is the operator's command for a device whose programming
// failed: its failed state is cleared without programming it and the
// device is released in Placement.
func (a *Agent) ClearFailed(ctx context.Context, device string) (ProgramResult, error) {
	res := ProgramResult{Device: device}
	prog := a.programmer()
	if prog == nil {
		return res, ErrNoProgrammer
	}
	c, ok := prog.(clearer)
	if !ok {
		return res, fmt.Errorf("%w: %s keeps no failed state", ErrNoProgrammer, prog.Name())
	}
	uuid, err := prog.DeviceProvider(device)
	if err != nil {
		return res, err
	}
	res.Provider = uuid
	if err := c.ClearFailed(device); err != nil {
		return res, err
	}
	res.Result = "cleared"
	a.log.Info("failed device cleared by the operator", zap.String("device", device))
	r := a.syncOne(ctx, prog)
	a.updateFailedDevices(prog)
	if r.Err != nil {
		return res, fmt.Errorf("cleared %s but Placement is not updated yet (next pass retries): %w", device, r.Err)
	}
	return res, nil
}
