package reconciler

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// fakeSection and fakeOptions are a job's own config section and
// options, declared as a new job's file declares them.
type fakeSection struct {
	Greeting string `yaml:"greeting"`
}

type fakeOptions struct {
	greeting string
}

const jobFake = "fake"

// fakeJob is a job with options, as its file would hold it: its section
// opened into its options, read back by its run.
func fakeJob() jobKind {
	return jobKind{
		name: jobFake,
		open: func(section any, _ JobEnv) (any, error) {
			s, ok := section.(fakeSection)
			if !ok {
				return nil, fmt.Errorf("fake: section of type %T", section)
			}
			if s.Greeting == "" {
				return nil, errors.New("reconciler.fake.greeting: must not be empty")
			}
			return &fakeOptions{greeting: s.Greeting}, nil
		},
		check: func(o Options) error {
			if _, ok := o.JobOptions[jobFake].(*fakeOptions); !ok {
				return errors.New("fake: no options")
			}
			return nil
		},
		work: func(r *Reconciler) jobFunc {
			o := r.opts.JobOptions[jobFake].(*fakeOptions)
			return func(context.Context) (outcome, error) {
				return outcome{detail: o.greeting}, nil
			}
		},
	}
}

// TestJobKinds_FakeJobWithOptions: a job with its own options needs its
// file (fakeJob), its section (keyed by its name) and one line in the
// list of kinds; nothing else names it. Its options are opened only when
// it is scheduled, from its section, and its run sees them; a bad
// section is refused by its own open.
func TestJobKinds_FakeJobWithOptions(t *testing.T) {
	kinds := append(jobKinds(), fakeJob()) // the one line
	sections := map[string]any{jobFake: fakeSection{Greeting: "hello"}}
	if opts, err := openJobOptions(kinds, map[string]string{JobOwnerTraits: "@every 1h"}, sections, JobEnv{}); err != nil || len(opts) != 0 {
		t.Fatalf("not scheduled: options %v, %v; want none opened", opts, err)
	}
	scheduled := map[string]string{jobFake: "@every 1h"}
	if _, err := openJobOptions(kinds, scheduled, map[string]any{jobFake: fakeSection{}}, JobEnv{}); err == nil {
		t.Fatal("an empty greeting was accepted")
	}
	opts, err := openJobOptions(kinds, scheduled, sections, JobEnv{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := newReconciler(Options{Placement: FromClient(nil), Jobs: scheduled, JobOptions: opts}, kinds)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.RunJob(context.Background(), jobFake)
	if err != nil || rec.Result != ResultOK || rec.Detail != "hello" {
		t.Fatalf("run: %+v, %v; want ok with the section's greeting", rec, err)
	}
	if _, err := newReconciler(Options{Placement: FromClient(nil), Jobs: scheduled}, kinds); err == nil {
		t.Error("scheduled without its options: accepted")
	}
	if _, err := New(Options{Placement: FromClient(nil), Jobs: scheduled}); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("without its line in the kinds: %v, want ErrUnknownJob", err)
	}
}
