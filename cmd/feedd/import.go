package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/importer"
)

func runImport(ctx context.Context, args []string, o cmdOptions) error {
	var drain bool
	return sharedCommand{
		name:    "import",
		usage:   "feedd import --redis URL [flags] FILE.jsonl   (FILE - reads stdin)",
		files:   1,
		instead: "the embedded store lives only as long as this process; use `feedd serve --import FILE` instead",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&drain, "drain", false, "also run fan-out workers here and return once the imported posts have reached every inbox")
		},
	}.run(ctx, args, o, func(svc *feedcore.Service, _ *storeFlags, args []string) error {
		if err := loadFile(ctx, svc, args[0], o.stdout); err != nil {
			return err
		}
		if !drain {
			fmt.Fprintln(o.stdout, "Fan-out continues in any running `feedd worker` or `feedd serve`.")
			return nil
		}
		return drainHere(ctx, svc, o.stdout)
	})
}

// loadFile imports path ("-" for stdin) and prints what it applied.
func loadFile(ctx context.Context, svc *feedcore.Service, path string, stdout io.Writer) error {
	in := os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	start := time.Now()
	o := importer.Defaults(svc)
	line := newProgress(stdout)
	if line != nil {
		o.Progress = importProgress(ctx, svc, line, start)
	}
	stats, err := importer.LoadWith(ctx, svc, in, o)
	line.done()
	fmt.Fprintf(stdout, "Imported %s: %d users, %d follows, %d posts, %d live sessions, %d likes, %d favorites, %d counters%s (%d skipped) from %d lines in %v.\n",
		path, stats.Users, stats.Follows, stats.Posts, stats.Lives, stats.Likes, stats.Favorites, stats.Counts,
		alsoCounted(counted{stats.Reposts, "reposts"}, counted{stats.Relations, "relations"},
			counted{stats.KeywordFilters, "keyword filters"}, counted{stats.Deleted, "deleted accounts"},
			counted{stats.Moderation, "moderation lines"}),
		stats.Skipped, stats.Lines, time.Since(start).Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("import %s: %w", path, err)
	}
	return nil
}

// drainHere runs workers in this process until the fan-out backlog is empty.
func drainHere(ctx context.Context, svc *feedcore.Service, stdout io.Writer) error {
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: clientName("import")}) }()
	start := time.Now()
	err := svc.Drain(ctx)
	stop()
	// Workers stopped by stop() rather than by ctx report nothing wrong,
	// even when the backlog was empty before they had started.
	if werr := <-done; err == nil && !(errors.Is(werr, context.Canceled) && ctx.Err() == nil) {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("drain fan-out: %w", err)
	}
	fmt.Fprintf(stdout, "Fan-out done in %v.\n", time.Since(start).Round(time.Millisecond))
	return nil
}

// importProgress returns an importer progress hook that shows on line the
// lines applied, their rate, and the fan-out backlog still queued.
func importProgress(ctx context.Context, svc *feedcore.Service, line *progress, start time.Time) func(importer.Stats) {
	return func(st importer.Stats) {
		if !line.due() {
			return
		}
		backlog, err := svc.Backlog(ctx)
		queued := fmt.Sprint(backlog)
		if err != nil {
			queued = "?"
		}
		rate := float64(st.Lines) / time.Since(start).Seconds()
		line.show("%d lines (%.0f/s): %d users, %d follows, %d posts; fan-out backlog %s",
			st.Lines, rate, st.Users, st.Follows, st.Posts, queued)
	}
}
