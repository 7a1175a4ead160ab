package timeline

import (
	"sync"

	"github.com/feedd/feedd/feedcore/core"
)

// Service is the timeline over the shared core: follows, fan-out, posts
// and replies, and the following feed's read path with the filters every
// read applies. Features above it embed it.
type Service struct {
	*core.Service
	// settling counts the follows' settles running on goroutines of their
	// own (settleLater), for WaitForFollows.
	settling sync.WaitGroup
}

// New returns the timeline over c, its journal kinds registered.
func New(c *core.Service) *Service {
	s := &Service{Service: c}
	c.OnRepair(JEdges, core.RepairPairs("e", s.SettleEdges)) // a follow or unfollow that died
	c.OnRepair(JFollow, s.repairFollow)                      // a follow whose settle after its answer did not run
	return s
}
