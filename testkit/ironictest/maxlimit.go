package ironictest

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SetMaxLimit changes [api] max_limit of the running Ironic (0: Ironic's
// 1000), as an operator would: the configuration file is rewritten and
// ironic-api, sent SIGHUP, reloads it without a restart. It returns once
// the API has logged the change.
func (ir *Ironic) SetMaxLimit(t testing.TB, n int) {
	t.Helper()
	if err := ir.setMaxLimit(n); err != nil {
		t.Fatal(err)
	}
}

func (ir *Ironic) setMaxLimit(n int) error {
	if n == ir.opts.MaxLimit {
		return nil
	}
	want := n
	if want == 0 {
		want = 1000
	}
	o := ir.opts
	o.MaxLimit = n
	if _, err := writeConfig(ir.dir, o, ir.apiPort, ir.rpcPort); err != nil {
		return err
	}
	api := ir.procs[len(ir.procs)-1]
	// oslo.config logs each mutable option it changed; the same change
	// may have been logged before.
	line := fmt.Sprintf("Option api.max_limit changed from [%d] to [%d]", ir.maxLimit(), want)
	seen := func() int {
		return strings.Count(api.ReadLog(), line)
	}
	before := seen()
	if err := api.Signal(syscall.SIGHUP); err != nil {
		return fmt.Errorf("ironictest: reload ironic-api: %w", err)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if seen() > before {
			ir.opts = o
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("ironictest: ironic-api did not log %q after SIGHUP", line)
}

func (ir *Ironic) maxLimit() int {
	if ir.opts.MaxLimit == 0 {
		return 1000
	}
	return ir.opts.MaxLimit
}
