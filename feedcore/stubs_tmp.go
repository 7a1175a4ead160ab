package feedcore

import "context"

// FollowingFeed returns one page of viewer's following feed.
func (s *Service) FollowingFeed(ctx context.Context, req FeedRequest) (*FeedPage, error) {
	panic("TODO")
}

// RunWorkers runs the fan-out dispatcher, executors, reclaimer and sweeper until ctx ends.
func (s *Service) RunWorkers(ctx context.Context, o WorkerOptions) error { panic("TODO") }

// Drain waits until every queued fan-out event and task is done.
func (s *Service) Drain(ctx context.Context) error { panic("TODO") }

type WorkerOptions struct {
	Name string
}

type event struct {
	Type string
	User ID
	Item Item
}

const (
	evPublish = "pub"
	evDelete  = "del"
	evPromote = "pro"
	evActivate = "act"
)

func (s *Service) emit(ctx context.Context, e event) error { panic("TODO") }
func (s *Service) isActive(seen int64) bool { panic("TODO") }
func parseInt(s string) (int64, error) { panic("TODO") }
