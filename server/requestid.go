package server

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// RequestIDHeader carries the request id both ways: a proxy may set it, and
// the response always echoes it, so a user quoting "internal error (request
// X)" leads an operator straight to the log line.
const RequestIDHeader = "X-Request-Id"

// requestID is the id a proxy gave r, when it is a valid one, else a new
// random one.
func requestID(r *http.Request) string {
	id := r.Header.Get(RequestIDHeader)
	if validRequestID(id) {
		return id
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validRequestID accepts short ids of safe characters only, so a client
// cannot inject text into logs or error messages.
func validRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
