package server

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

// rateLimit takes one operation from the viewer's allowance (GCRA in
// Redis, so every replica shares it) after the operation has been parsed
// and validated and before anything runs. Anonymous requests are not
// limited here. A refusal is RATE_LIMITED with extensions.retryAfterMs,
// and the HTTP response gets status 429 and a Retry-After header (see
// httpState). If Redis cannot answer, the operation goes ahead: it needs
// Redis anyway and will report UNAVAILABLE itself.
type rateLimit struct {
	svc   *feedcore.Service
	limit feedcore.RateLimit
	log   *slog.Logger
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = rateLimit{}

func (rateLimit) ExtensionName() string                          { return "RateLimit" }
func (rateLimit) Validate(schema graphql.ExecutableSchema) error { return nil }

func (l rateLimit) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	viewer := auth.FromContext(ctx).ViewerID
	if viewer == 0 {
		return nil
	}
	sctx, cancel := stepContext(ctx)
	defer cancel()
	err := l.svc.Allow(sctx, viewer, l.limit)
	if err == nil {
		return nil
	}
	var fe *feedcore.Error
	if !errors.As(err, &fe) || fe.Code != feedcore.CodeRateLimited {
		logStoreError(ctx, l.log, "rate limit: store did not answer; letting the operation through", err)
		return nil
	}
	if s := stateOf(ctx); s != nil {
		s.setRetryAfter(fe.RetryAfter)
	}
	return &gqlerror.Error{
		Err:     fe,
		Message: fe.Message,
		Extensions: map[string]any{
			"code":         string(feedcore.CodeRateLimited),
			"retryAfterMs": fe.RetryAfter.Milliseconds(),
		},
	}
}

// stepShare is the part of a request's remaining time that one step in
// front of the operation (rate limit, APQ lookup or registration) may take.
// A step that may fail open must not eat the whole budget: with a silent
// store the operation itself still gets the time to report UNAVAILABLE
// (gqlgen answers a bare null once the request's deadline has passed).
const stepShare = 4

// stepContext bounds a pre-operation step to 1/stepShare of what is left of
// ctx's deadline.
func stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Until(dl)/stepShare)
}

// httpState carries what an operation decided back to the HTTP layer,
// which gqlgen does not expose to extensions.
type httpState struct {
	mu         sync.Mutex
	retryAfter time.Duration
}

type httpStateKey struct{}

func withState(ctx context.Context) (context.Context, *httpState) {
	s := &httpState{}
	return context.WithValue(ctx, httpStateKey{}, s), s
}

func stateOf(ctx context.Context) *httpState {
	s, _ := ctx.Value(httpStateKey{}).(*httpState)
	return s
}

func (s *httpState) setRetryAfter(d time.Duration) {
	s.mu.Lock()
	s.retryAfter = d
	s.mu.Unlock()
}

func (s *httpState) getRetryAfter() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.retryAfter
}

// stateWriter turns a rate-limited response into 429 with Retry-After
// (whole seconds, rounded up) at the moment its header is written.
type stateWriter struct {
	http.ResponseWriter
	state       *httpState
	wroteHeader bool
}

func (w *stateWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if d := w.state.getRetryAfter(); d > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
		status = http.StatusTooManyRequests
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *stateWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *stateWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
