package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/placement-syncd/placement-syncd/adopt/verify"
	"github.com/placement-syncd/placement-syncd/cmd/placement-syncd/internal/config"
	"github.com/placement-syncd/placement-syncd/placementsrv"
)

// cmdDBVerify compares a running Placement's answers with ours: those of
// a running placement-syncd (--ours), or of our database served on a
// loopback port for the run. Differences exit 1.
func cmdDBVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, common := newConfigFlagSet("db verify", "placement-syncd db verify --against URL [--ours URL] [--token T] [--ours-token T] [--config FILE] [--db PATH|URL]", stderr, configSpec{})
	against := f.String("against", "", "base URL of the Placement to compare with, e.g. http://controller:8778")
	ours := f.String("ours", "", "base URL of a running placement-syncd (default: serve our database on a loopback port for the run)")
	token := f.String("token", "admin", "X-Auth-Token for --against (noauth2: admin; keystone: an admin token)")
	oursToken := f.String("ours-token", "", "X-Auth-Token for --ours (default: --token)")
	parallel := f.Int("parallel", 4, "requests at once on each side")
	cfg, err := common.parseLoad(args)
	if err != nil {
		return err
	}
	if *against == "" {
		return usageError{errors.New("db verify: --against URL is required")}
	}
	if *oursToken == "" {
		*oursToken = *token
	}
	oursURL := *ours
	if oursURL == "" {
		url, stop, err := serveForVerify(ctx, cfg)
		if err != nil {
			return err
		}
		defer stop()
		oursURL, *oursToken = url, "admin"
	}
	start := time.Now()
	rep, err := verify.Run(ctx, verify.Options{
		Ref: verify.Server{URL: *against, Token: *token}, Ours: verify.Server{URL: oursURL, Token: *oursToken},
		Parallel: *parallel,
		Progress: func(stage string, n int) { fmt.Fprintf(stdout, "verify: %s: %d requests\n", stage, n) },
	})
	if err != nil {
		return fmt.Errorf("verify against %s: %w", *against, err)
	}
	for _, d := range rep.Diffs {
		fmt.Fprintln(stdout, d)
	}
	fmt.Fprintf(stdout, "verify: %d requests to each side, %d providers, %d consumers, %d projects, %d allocation candidate queries: %d differences (%s)\n",
		rep.Requests, rep.Providers, rep.Consumers, rep.Projects, rep.CandidateQueries, len(rep.Diffs), time.Since(start).Round(time.Millisecond))
	if len(rep.Diffs) > 0 {
		return exitError{code: exitFailure, err: fmt.Errorf("%d differences from %s", len(rep.Diffs), *against)}
	}
	return nil
}

// serveForVerify serves the configured database with noauth2 on a
// loopback port until stop is called, following api.release's rules as
// serve would.
func serveForVerify(ctx context.Context, cfg config.Config) (url string, stop func(), err error) {
	u, err := cfg.Database.URL()
	if err != nil {
		return "", nil, usageError{err}
	}
	if err := requireDatabase(u); err != nil {
		return "", nil, err
	}
	st, err := openStore(ctx, u, cfg.Database, storeMode{}, zap.NewNop(), nil)
	if err != nil {
		return "", nil, err
	}
	srv, err := placementsrv.New(placementsrv.Options{
		Store: st, Auth: "noauth2", Logger: zap.NewNop(), Limits: cfg.API.Limits(), Release: cfg.API.ReleaseValue(),
		RandomizeAllocationCandidates: cfg.API.AllocationCandidates.Randomize,
		MaxAllocationCandidates:       cfg.API.AllocationCandidates.Cap(),
		AllocationCandidatesOrder:     cfg.API.AllocationCandidates.Order,
		OptimizeForWideProviderTrees:  cfg.API.AllocationCandidates.OptimizeForWideProviderTrees,
		OmitOpenStackMetrics:          true,
	})
	if err != nil {
		st.Close()
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return "", nil, fmt.Errorf("listen: %w", err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Run(sctx, ln, time.Second) }()
	return "http://" + ln.Addr().String(), func() {
		cancel()
		<-done
		st.Close()
	}, nil
}
