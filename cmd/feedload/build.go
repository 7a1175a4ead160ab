package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/importer"
	"github.com/feedd/feedd/importer/importgen"
)

// build writes the network spec describes to an import file (path, or a
// temporary file when path is empty), imports it into svc, and runs fan-out
// workers here until every imported post has reached its inboxes.
func build(ctx context.Context, svc *feedcore.Service, spec importgen.Spec, path string, log io.Writer) (*loadreport.BuildReport, error) {
	start := time.Now()
	var f *os.File
	var err error
	if path == "" {
		f, err = os.CreateTemp("", "feedload-*.jsonl")
		if err == nil {
			defer os.Remove(f.Name())
		}
	} else {
		f, err = os.Create(path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(log, "feedload: generating %d users, about %d follows, %d posts, %d live sessions\n",
		spec.Users, spec.Users*spec.FollowsPerUser, spec.Posts, spec.Lives)
	c, err := importgen.Write(f, spec)
	if err != nil {
		return nil, fmt.Errorf("generate the network: %w", err)
	}
	rep := &loadreport.BuildReport{Users: c.Users, Follows: c.Follows, Posts: c.Posts, Lives: c.Lives,
		GenerateSecond: time.Since(start).Seconds()}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}

	// Workers run during the import too, so fan-out overlaps it.
	wctx, stopWorkers := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: fmt.Sprintf("feedload-%d", os.Getpid())})
	}()
	defer func() { stopWorkers(); <-done }()

	start = time.Now()
	o := importer.Defaults(svc)
	p := newProgress(log)
	o.Progress = func(st importer.Stats) {
		p.update(func() string {
			return fmt.Sprintf("import: %d lines (%.0f/s): %d users, %d follows, %d posts, %d live",
				st.Lines, float64(st.Lines)/time.Since(start).Seconds(), st.Users, st.Follows, st.Posts, st.Lives)
		})
	}
	st, err := importer.LoadWith(ctx, svc, f, o)
	p.done()
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	rep.ImportSeconds = time.Since(start).Seconds()
	fmt.Fprintf(log, "feedload: imported %d lines in %.1fs\n", st.Lines, rep.ImportSeconds)

	start = time.Now()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-dctx.Done():
				return
			case <-t.C:
				n, err := svc.Backlog(dctx)
				if err == nil {
					p.update(func() string { return fmt.Sprintf("fan-out: backlog %d", n) })
				}
			}
		}
	}()
	err = svc.Drain(ctx)
	cancel()
	p.done()
	if err != nil {
		return nil, fmt.Errorf("drain the import's fan-out: %w", err)
	}
	rep.FanoutSeconds = time.Since(start).Seconds()
	fmt.Fprintf(log, "feedload: fan-out drained %.1fs after the import\n", rep.FanoutSeconds)
	return rep, nil
}
