package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/importer"
)

func runExport(ctx context.Context, args []string, o cmdOptions) error {
	return sharedCommand{
		name:    "export",
		usage:   "feedd export --redis URL [--key-prefix P] FILE.jsonl   (FILE - writes stdout)",
		files:   1,
		instead: "the embedded store of this process is empty",
	}.run(ctx, args, o, func(svc *feedcore.Service, _ *storeFlags, args []string) error {
		return export(ctx, svc, args[0], o.stdout)
	})
}

// export writes every record to path ("-" for stdout), with a progress
// line on a terminal, and reports what it wrote.
func export(ctx context.Context, svc *feedcore.Service, path string, stdout io.Writer) error {
	out, report := stdout, stdout
	var err error
	var f *os.File
	if path == "-" {
		report = os.Stderr // stdout carries the records
	} else {
		// Written aside and renamed when complete, so FILE is never a
		// partial export.
		f, err = os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name()) // after the rename: nothing left to remove
		defer f.Close()
		out = f
	}
	start := time.Now()
	var o importer.ExportOptions
	line := newProgress(report)
	if line != nil {
		o.ProgressEvery = 1000
		o.Progress = func(s importer.ExportStats) {
			if line.due() {
				line.show("%d lines (%.0f/s): %d users, %d follows, %d posts, %d live sessions, %d likes, %d counters",
					s.Lines, float64(s.Lines)/time.Since(start).Seconds(), s.Users, s.Follows, s.Posts, s.Lives, s.Likes, s.Counts)
			}
		}
	}
	stats, err := importer.Export(ctx, svc, out, o)
	line.done()
	if err == nil && f != nil {
		if err = f.Sync(); err == nil {
			if err = f.Close(); err == nil {
				err = os.Rename(f.Name(), path)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("export to %s: %w (after %d lines)", path, err, stats.Lines)
	}
	d := time.Since(start)
	fmt.Fprintf(report, "Exported %d users, %d follows, %d posts, %d live sessions, %d likes, %d favorites, %d counters%s: %d lines to %s in %v (%.0f lines/s).\n",
		stats.Users, stats.Follows, stats.Posts, stats.Lives, stats.Likes, stats.Favorites, stats.Counts,
		alsoCounted(counted{stats.Reposts, "reposts"}, counted{stats.Relations, "relations"},
			counted{stats.KeywordFilters, "keyword filters"}, counted{stats.Deleted, "deleted accounts"},
			counted{stats.Suspended, "suspensions"}, counted{stats.Takedowns, "takedowns"},
			counted{stats.Reports, "reports"}, counted{stats.Audit, "audit entries"}),
		stats.Lines, path, d.Round(time.Millisecond), float64(stats.Lines)/max(d.Seconds(), 1e-9))
	return nil
}

// counted is a number of lines of one kind, for a summary.
type counted struct {
	n    int
	what string
}

// alsoCounted names the kinds of lines a summary lists only when there
// are some: ", 3 reposts, 1 relations", or "".
func alsoCounted(cs ...counted) string {
	var b strings.Builder
	for _, c := range cs {
		if c.n > 0 {
			fmt.Fprintf(&b, ", %d %s", c.n, c.what)
		}
	}
	return b.String()
}
