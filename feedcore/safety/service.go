package safety

import (
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/live"
)

// Service is who sees whom over the live feed and the timeline: blocks,
// mutes and hides, their settling into the slots that reads and pushes
// read, the clean-up of what was pushed before, and keyword filters.
// Features above it embed it.
type Service struct {
	*live.Service
}

// New returns the safety rules over l, their journal kind registered.
func New(l *live.Service) *Service {
	s := &Service{Service: l}
	l.OnRepair(JRel, core.RepairPairs("p", s.SettleRelations)) // a relation change that died
	return s
}
