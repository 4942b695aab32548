package reconciler

import (
	"os"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// TestMain stops the real Nova if a test started it, and checks that
// the tests leave no goroutine behind: every run,
// cron loop, server and test double stops. Idle keep-alive connections
// of the shared default transport are closed first; they are a cache,
// not a leak.
func TestMain(m *testing.M) { os.Exit(svcproc.RunMain(m, realNova, svcproc.NoLeaks())) }
