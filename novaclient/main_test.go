package novaclient

import (
	"fmt"
	"os"
	"testing"

	"github.com/placement-syncd/placement-syncd/testkit/novatest"
)

// realNova is the binary's nova-api, started by the first test that
// needs it.
var realNova novatest.Main

// TestMain stops the real Nova if a test started it.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := realNova.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "novatest: %v\n", err)
		code = 1
	}
	os.Exit(code)
}
