package moderation

import "github.com/feedd/feedd/feedcore/lists"

// Service is the operators' and the reporters' side over the lists:
// reports, takedowns, suspensions, the audit trail, and account deletion.
// The facade (package feedcore) embeds it.
type Service struct {
	*lists.Service
}

// New returns moderation over l, its journal kinds registered.
func New(l *lists.Service) *Service {
	s := &Service{Service: l}
	l.OnRepair(JAccount, s.repairAccount)
	l.OnRepair(JSuspend, s.repairSuspension)
	l.OnRepair(JTakedown, s.repairTakedown)
	return s
}
