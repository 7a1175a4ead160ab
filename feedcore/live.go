package feedcore

import (
	"context"
	"time"
)

// ScheduleLive creates a PREVIEW session of anchor.
func (s *Service) ScheduleLive(ctx context.Context, anchor ID, title string, at time.Time) (*LiveSession, error) {
	return nil, errorf(CodeInternal, "live sessions are not implemented yet")
}

// StartLive moves anchor's session from PREVIEW to LIVE.
func (s *Service) StartLive(ctx context.Context, anchor, id ID) (*LiveSession, error) {
	return nil, errorf(CodeInternal, "live sessions are not implemented yet")
}

// EndLive ends anchor's session.
func (s *Service) EndLive(ctx context.Context, anchor, id ID) (*LiveSession, error) {
	return nil, errorf(CodeInternal, "live sessions are not implemented yet")
}

// LiveFeed returns a page of viewer's live feed.
func (s *Service) LiveFeed(ctx context.Context, req LiveRequest) (*LivePage, error) {
	return nil, errorf(CodeInternal, "live feed is not implemented yet")
}
