package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/daemontest"
)

// allInOne is a `serve` run in-process with the agent and the reconciler.
type allInOne struct {
	*daemontest.Daemon
	// agent and reconciler are their local endpoints, without a token.
	agent, reconciler daemontest.Client
}

// startAllInOne runs serve in process with the config at cfgPath (every
// listener on port 0, JSON logs) until the test ends, and reads the
// bound addresses from the start-up log lines.
func startAllInOne(t *testing.T, cfgPath string) *allInOne {
	t.Helper()
	d := syncd.Start(t, daemontest.Options{InProcess: true, Args: []string{"serve", "--config", cfgPath}})
	return &allInOne{Daemon: d,
		agent:      d.Client("http://"+d.Log.Field(t, "agent local endpoint", "listen"), ""),
		reconciler: d.Client("http://"+d.Log.Field(t, "reconciler endpoint", "listen"), ""),
	}
}

// demoInit runs `demo init` with the config at cfgPath.
func demoInit(t *testing.T, ctx context.Context, cfgPath string) {
	t.Helper()
	var stderr bytes.Buffer
	if code := run(ctx, []string{"demo", "init", "--config", cfgPath}, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("demo init: exit %d: %s", code, stderr.String())
	}
}
