package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/feedd/feedd/importer"
)

func runExport(ctx context.Context, args []string, o cmdOptions) error {
	fs := o.flagSet("export")
	store := addStoreFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: feedd export --redis URL [--key-prefix P] FILE.jsonl   (FILE - writes stdout)")
		fs.PrintDefaults()
	}
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("export takes one file")
	}
	st, svc, err := openShared(ctx, store, "export", "the embedded store of this process is empty")
	if err != nil {
		return err
	}
	defer st.Close()

	path := fs.Arg(0)
	out, report := o.stdout, o.stdout
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
	var eo importer.ExportOptions
	if isTerminal(report) {
		var last time.Time
		eo.ProgressEvery = 1000
		eo.Progress = func(s importer.ExportStats) {
			if now := time.Now(); now.Sub(last) >= time.Second {
				last = now
				fmt.Fprintf(report, "\r\033[K%d lines (%.0f/s): %d users, %d follows, %d posts, %d live sessions, %d likes, %d counters",
					s.Lines, float64(s.Lines)/now.Sub(start).Seconds(), s.Users, s.Follows, s.Posts, s.Lives, s.Likes, s.Counts)
			}
		}
	}
	stats, err := importer.Export(ctx, svc, out, eo)
	if eo.Progress != nil {
		fmt.Fprint(report, "\r\033[K")
	}
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
	fmt.Fprintf(report, "Exported %d users, %d follows, %d posts, %d live sessions, %d likes, %d counters: %d lines to %s in %v (%.0f lines/s).\n",
		stats.Users, stats.Follows, stats.Posts, stats.Lives, stats.Likes, stats.Counts, stats.Lines, path,
		d.Round(time.Millisecond), float64(stats.Lines)/max(d.Seconds(), 1e-9))
	return nil
}
