package lists

import (
	"context"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/safety"
)

// Service is the lists and what a page's items carry, over the safety
// rules: favorites, an author's posts, followers and following, the
// viewer's relations, a post's replies; likes, reposts and their
// counters; and hydration, the viewer's flags and counters read for a
// page in one round trip. Features above it embed it.
type Service struct {
	*safety.Service
}

// New returns the lists over sf, their journal kind registered.
func New(sf *safety.Service) *Service {
	s := &Service{Service: sf}
	sf.OnRepair(JFav, core.RepairPairs("p", func(ctx context.Context, pairs []core.Edge) error {
		_, err := s.settleFavorites(ctx, pairs, nil) // a favorite or unfavorite that died
		return err
	}))
	return s
}
