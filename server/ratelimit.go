package server

import (
	"math"
	"net/http"
	"strconv"

	"github.com/feedd/feedd/reqinfo"
)

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

// Flush and FlushError let a stream's flushes, and their errors, through;
// Unwrap lets http.ResponseController and a WebSocket upgrade reach the
// connection (its deadlines, Hijack).
func (w *stateWriter) Flush() { _ = w.FlushError() }

func (w *stateWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *stateWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
