package assemble

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
)

// NewLogger builds the process logger writing to w: JSON lines for
// production, or the human-readable console encoder for development.
// There is no sampling: every request line is kept.
func NewLogger(cfg config.LogConfig, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(cfg.Level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	var enc zapcore.Encoder
	switch cfg.Format {
	case "json":
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewJSONEncoder(ec)
	case "console":
		ec := zap.NewDevelopmentEncoderConfig()
		enc = zapcore.NewConsoleEncoder(ec)
	default:
		return nil, fmt.Errorf("log format %q: want json or console", cfg.Format)
	}
	// Lock: w may be shared (stderr, or a test buffer) by many goroutines.
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)
	return zap.New(core, zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(w)))), nil
}

// LogExposure logs, at every start, what validateSafety lets through but
// an operator should know.
func LogExposure(c config.Config, log *zap.Logger) {
	if c.API.AuthStrategy == "noauth2" && !config.IsLoopback(c.API.Listen) {
		log.Warn("INSECURE: the Placement API listens beyond loopback with noauth2: any client can act as admin (api.allow_insecure_noauth is true)",
			zap.String("listen", c.API.Listen))
	}
	if c.Reconciler.Enabled && c.Reconciler.Token == "" {
		log.Info("reconciler endpoint on loopback without a token: any process on this host may post heartbeats and run jobs; set reconciler.token to require one",
			zap.String("listen", c.Reconciler.Listen))
	}
}
