package server

import (
	"net/http"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/reqinfo"
)

// DeviceHeader names the caller's device (an app install, a browser) for
// the live feed: each device of a viewer keeps one snapshot. Optional; see
// feedcore.LiveRequest.Device for what it may hold.
const DeviceHeader = "X-Device-Id"

// withRequestInfo puts each request's facts into its context, once,
// before anything else runs: its id (echoed in RequestIDHeader), the
// client's address, the caller's identity and device. Everything after it
// reads them from the context (reqinfo), never from the headers. It never
// refuses a request: fields that need a viewer fail with UNAUTHENTICATED,
// while public ones still answer. With them comes the request's Outcome,
// for the steps that decide the answer to report it.
func withRequestInfo(cfg Config, next http.Handler) http.Handler {
	addrOf := clientAddr(cfg.TrustedProxyHeader, cfg.TrustedProxies)
	authn := auth.Config{DevAuth: cfg.DevAuth, Verifier: cfg.Verifier}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f := reqinfo.Facts{
			RequestID:  requestID(r),
			ClientAddr: addrOf(r),
			Identity:   auth.Resolve(authn, r),
			Device:     r.Header.Get(DeviceHeader),
		}
		w.Header().Set(RequestIDHeader, f.RequestID)
		next.ServeHTTP(w, r.WithContext(reqinfo.With(r.Context(), f)))
	})
}
