package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/feedd/feedd/server/reqinfo"
)

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

// stateWriter turns a rate-limited response into 429 with Retry-After
// (whole seconds, rounded up) at the moment its header is written: the
// request's Outcome says whether a step refused the caller for now, which
// gqlgen does not tell its transports.
type stateWriter struct {
	http.ResponseWriter
	outcome     *reqinfo.Outcome
	wroteHeader bool
}

func (w *stateWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if d := w.outcome.RetryAfter(); d > 0 {
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
