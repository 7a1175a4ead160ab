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
	line := newProgress(stdout)
	if line != nil {
		o.Progress = func(p feedcore.RebuildProgress) {
			if line.due() || p.Done == p.Total {
				line.show("%s: %d/%d; %d inboxes, %d entries, %d stale removed (%v)",
					p.Phase, p.Done, p.Total, p.Stats.Readers, p.Stats.InboxEntries, p.Stats.Removed,
					time.Since(start).Round(time.Second))
			}
		}
	}
	rs, err := svc.Rebuild(ctx, o)
	line.done()
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
