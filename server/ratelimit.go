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

func (w *stateWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
