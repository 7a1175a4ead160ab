package feedcore

import (
	"context"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/live"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Service reads and writes feeds. It is safe for concurrent use; many
// replicas may share one Redis. It is the features over the shared core
// (core.Service): each feature's methods are here, the state and the
// mechanisms they share are the core's.
type Service struct {
	*lists.Service
}

// New returns a Service over client. When opts.CursorKey is empty the
// sealing key is read from Redis, created there by the first replica.
func New(ctx context.Context, client rueidis.Client, opts Options) (*Service, error) {
	c, err := core.New(ctx, client, opts)
	if err != nil {
		return nil, err
	}
	s := &Service{Service: lists.New(safety.New(live.New(timeline.New(c))))}
	s.registerRepairs()
	return s, nil
}

// registerRepairs tells the journal how each feature completes the
// mutations of its kinds that died half way.
func (s *Service) registerRepairs() {
	s.OnRepair(jAccount, s.repairAccount)
	s.OnRepair(jSuspend, s.repairSuspension)
	s.OnRepair(jTakedown, s.repairTakedown)
}
