package server

import (
	"net/http"
	"net/http/pprof"
)

// handlePprof serves Go's profiles (net/http/pprof) under /debug/pprof/ on
// mux, the operations listener's. Never on the public listener: a profile
// or trace stalls or slows the process for as long as the caller asks, and
// the command line may hold secrets. (The package's init also registers
// its handlers on http.DefaultServeMux, which feedd never serves.)
func handlePprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // and every named profile: heap, goroutine, ...
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol) // the pprof tool's lookups
}
