package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// runRebuild recomputes every derived structure from the records, online
// and resumable (see feedcore.Service.Rebuild).
func runRebuild(ctx context.Context, args []string, o cmdOptions) error {
	fs := o.flagSet("rebuild")
	store := addStoreFlags(fs)
	restart := fs.Bool("restart", false, "feedd rebuild only: start over instead of resuming an unfinished rebuild from its checkpoint")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: feedd rebuild --redis URL [--key-prefix P] [--restart]")
		fs.PrintDefaults()
	}
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errors.New("rebuild takes no arguments")
	}
	st, svc, err := openShared(ctx, store, "rebuild", "the embedded store holds nothing to rebuild")
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	ro := feedcore.RebuildOptions{Restart: *restart}
	if isTerminal(o.stdout) {
		var last time.Time
		ro.Progress = func(p feedcore.RebuildProgress) {
			if now := time.Now(); now.Sub(last) >= time.Second || p.Done == p.Total {
				last = now
				fmt.Fprintf(o.stdout, "\r\033[K%s: %d/%d; %d inboxes, %d entries, %d stale removed (%v)",
					p.Phase, p.Done, p.Total, p.Stats.Readers, p.Stats.InboxEntries, p.Stats.Removed,
					now.Sub(start).Round(time.Second))
			}
		}
	}
	rs, err := svc.Rebuild(ctx, ro)
	if ro.Progress != nil {
		fmt.Fprint(o.stdout, "\r\033[K")
	}
	took := time.Since(start)
	resumed := ""
	if rs.Resumed {
		resumed = " (resumed from a checkpoint)"
	}
	fmt.Fprintf(o.stdout, "Rebuilt%s: %d followers entries, %d outbox entries, %d live sessions, %d authors (%d big-V), %d inboxes with %d entries (%.0f inboxes/s, %.0f entries/s), %d stale entries removed, in %v.\n",
		resumed, rs.Follows, rs.Posts, rs.Sessions, rs.Authors, rs.BigV, rs.Readers, rs.InboxEntries,
		float64(rs.Readers)/took.Seconds(), float64(rs.InboxEntries)/took.Seconds(), rs.Removed, took.Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("rebuild (run it again to resume): %w", err)
	}
	return nil
}
