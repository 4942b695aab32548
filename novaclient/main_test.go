package novaclient

import (
	"os"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/novatest"
	"github.com/placement-syncd/placement-syncd/testkit/svcproc"
)

// realNova is the binary's nova-api, started by the first test that
// needs it.
var realNova = novatest.Shared()

// TestMain stops the real Nova if a test started it, and checks that
// the tests leave no goroutine behind.
func TestMain(m *testing.M) {
	os.Exit(svcproc.RunMain(m, realNova, svcproc.NoLeaks()))
}
