package live

import "github.com/feedd/feedd/feedcore/timeline"

// Service is the live feed over the timeline: sessions scheduled, started
// and ended, the anchors' queues, replays, and the live feed paged from a
// snapshot. Features above it embed it.
type Service struct {
	*timeline.Service
}

// New returns the live feed over t, its journal kind registered.
func New(t *timeline.Service) *Service {
	s := &Service{Service: t}
	t.OnRepair(JLive, s.repairLive)
	return s
}
