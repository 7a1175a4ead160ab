package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

// Report files the viewer's report; feedcore checks the subject, the
// reason and comment and the reporter's allowance (Resolver.ReportLimit).
func (r *mutationResolver) Report(ctx context.Context, input graph.ReportInput) (*graph.ReportPayload, error) {
	id, err := mutate(ctx, r.Resolver, object{}, func(ctx context.Context, viewer, _ feedcore.ID) (string, error) {
		subject, err := reportSubject(input.SubjectID)
		if err != nil {
			return "", err
		}
		return r.Svc.Report(ctx, feedcore.ReportRequest{Reporter: viewer, Subject: subject,
			Reason: string(input.Reason), Comment: deref(input.Comment), Limit: r.ReportLimit})
	})
	if err != nil {
		return nil, err
	}
	return &graph.ReportPayload{ReportID: id}, nil
}

// reportSubject reads a report's subjectId: a Post, User or LiveSession
// global id (a plain database id cannot say which).
func reportSubject(raw string) (feedcore.Target, error) {
	t, id, err := gqltype.Decode(raw)
	kind, ok := map[gqltype.Type]feedcore.TargetKind{gqltype.Post: feedcore.TargetPost,
		gqltype.User: feedcore.TargetUser, gqltype.LiveSession: feedcore.TargetLive}[t]
	if err != nil || !ok {
		return feedcore.Target{}, fail(apierr.BadInput, "subjectId: %q is not a Post, User or LiveSession id", raw)
	}
	return feedcore.Target{Kind: kind, ID: id}, nil
}
