package feedcore

import (
	"context"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/live"
	"github.com/feedd/feedd/feedcore/moderation"
	"github.com/feedd/feedd/feedcore/realtime"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Service reads and writes feeds. It is safe for concurrent use; many
// replicas may share one Redis. It is the top of the layers (each embeds
// the one below: moderation, lists, safety, live, timeline, core), and
// adds what spans them all: the workers, export and rebuild.
type Service struct {
	*realtime.Service
}

// New returns a Service over client. When opts.CursorKey is empty the
// sealing key is read from Redis, created there by the first replica.
func New(ctx context.Context, client rueidis.Client, opts Options) (*Service, error) {
	c, err := core.New(ctx, client, opts)
	if err != nil {
		return nil, err
	}
	// Each layer embeds the one below and registers its own journal
	// kinds: the core, the timeline, the live feed, the safety rules, the
	// lists, moderation, realtime.
	return &Service{Service: realtime.New(moderation.New(lists.New(safety.New(live.New(timeline.New(c))))))}, nil
}
