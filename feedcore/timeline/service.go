package timeline

import "github.com/feedd/feedd/feedcore/core"

// Service is the timeline over the shared core: follows, fan-out, posts
// and replies, and the following feed's read path with the filters every
// read applies. Features above it embed it.
type Service struct {
	*core.Service
}

// New returns the timeline over c, its journal kinds registered.
func New(c *core.Service) *Service {
	s := &Service{Service: c}
	c.OnRepair(JEdges, core.RepairPairs("e", s.SettleEdges)) // a follow or unfollow that died
	return s
}
