package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// runRebuild recomputes every derived structure from the records, online
// and resumable (see feedcore.Service.Rebuild).
func runRebuild(ctx context.Context, args []string, o cmdOptions) error {
	var restart bool
	return sharedCommand{
		name:    "rebuild",
		usage:   "feedd rebuild --redis URL [--key-prefix P] [--restart]",
		instead: "the embedded store holds nothing to rebuild",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&restart, "restart", false, "feedd rebuild only: start over instead of resuming an unfinished rebuild from its checkpoint")
		},
	}.run(ctx, args, o, func(svc *feedcore.Service, _ *storeFlags, _ []string) error {
		return rebuild(ctx, svc, restart, o.stdout)
	})
}

// rebuild runs the rebuild, with a progress line on a terminal, and
// prints what it did.
func rebuild(ctx context.Context, svc *feedcore.Service, restart bool, stdout io.Writer) error {
	start := time.Now()
	o := feedcore.RebuildOptions{Restart: restart}
	if isTerminal(stdout) {
		var last time.Time
		o.Progress = func(p feedcore.RebuildProgress) {
			if now := time.Now(); now.Sub(last) >= time.Second || p.Done == p.Total {
				last = now
				fmt.Fprintf(stdout, "\r\033[K%s: %d/%d; %d inboxes, %d entries, %d stale removed (%v)",
					p.Phase, p.Done, p.Total, p.Stats.Readers, p.Stats.InboxEntries, p.Stats.Removed,
					now.Sub(start).Round(time.Second))
			}
		}
	}
	rs, err := svc.Rebuild(ctx, o)
	if o.Progress != nil {
		fmt.Fprint(stdout, "\r\033[K")
	}
	took := time.Since(start)
	resumed := ""
	if rs.Resumed {
		resumed = " (resumed from a checkpoint)"
	}
	fmt.Fprintf(stdout, "Rebuilt%s: %d followers entries, %d outbox entries, %d live sessions, %d authors (%d big-V), %d inboxes with %d entries (%.0f inboxes/s, %.0f entries/s), %d stale entries removed, in %v.\n",
		resumed, rs.Follows, rs.Posts, rs.Sessions, rs.Authors, rs.BigV, rs.Readers, rs.InboxEntries,
		float64(rs.Readers)/took.Seconds(), float64(rs.InboxEntries)/took.Seconds(), rs.Removed, took.Round(time.Millisecond))
	if err != nil {
		return fmt.Errorf("rebuild (run it again to resume): %w", err)
	}
	return nil
}
