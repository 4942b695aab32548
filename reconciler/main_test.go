package reconciler

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain stops the real Nova if a test started it, and checks that
// the tests leave no goroutine behind: every run,
// cron loop, server and test double stops. Idle keep-alive connections
// of the shared default transport are closed first; they are a cache,
// not a leak.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := realNova.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "novatest: %v\n", err)
		code = 1
	}
	if code == 0 {
		if tr, ok := http.DefaultTransport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
