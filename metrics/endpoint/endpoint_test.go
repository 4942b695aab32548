package endpoint

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/placement-syncd/placement-syncd/metrics"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// failing is a collector whose Collect fails.
type failing struct{ desc *prometheus.Desc }

func (f failing) Describe(ch chan<- *prometheus.Desc) { ch <- f.desc }
func (f failing) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.NewInvalidMetric(f.desc, errors.New("backend down"))
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestServer runs the separate metrics listener: /metrics only, the rest
// of the registry still served when one collector fails, and a clean stop.
func TestServer(t *testing.T) {
	reg := metrics.NewRegistry(metrics.BuildInfo{Version: "v", Commit: "c", GoVersion: "g"})
	reg.MustRegister(failing{prometheus.NewDesc("broken_thing", "fails", nil, nil)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Server{Handler: Handler(reg, zaptest.NewLogger(t)), Grace: time.Second}.Run(ctx, ln)
	}()
	base := "http://" + ln.Addr().String()

	code, body := get(t, base+metrics.Path)
	if code != 200 || !strings.Contains(body, "placement_syncd_build_info{") {
		t.Errorf("GET /metrics: %d\n%s", code, body)
	}
	if strings.Contains(body, "broken_thing") {
		t.Error("the failing collector's metric was served")
	}
	if code, _ := get(t, base+"/"); code != 404 {
		t.Errorf("GET /: %d, want 404", code)
	}
	// The first scrape's gathering error was counted before it answered.
	_, body = get(t, base+metrics.Path)
	if !strings.Contains(body, `promhttp_metric_handler_errors_total{cause="gathering"} 1`) {
		t.Errorf("the collector's failure is not counted:\n%s", body)
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
}
