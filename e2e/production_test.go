package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server"
)

// prodEnv is feedd as production runs it: no dev header, tokens with an
// issuer and audience, and the given API limits.
func prodEnv(t *testing.T, api server.APIConfig) *env {
	t.Helper()
	st := storetest.New(t)
	e := newEnvWith(t, st.Client, st.Prefix, feedcore.Options{}, func(c *server.Config) {
		c.DevAuth = false
		// The server's clock runs two hours ahead, so a token minted for an
		// hour has expired there (exp has second resolution: no waiting).
		c.Verifier = &auth.Verifier{HS256Secret: secret, Issuer: "feedd", Audience: "app",
			Now: func() time.Time { return time.Now().Add(2 * time.Hour) }}
		c.APIConfig = api
	})
	e.st = st
	e.users("ann", "bob")
	return e
}

func (e *env) tokenWith(key []byte, id feedcore.ID, ttl time.Duration, o auth.MintOptions) string {
	e.t.Helper()
	tok, err := auth.MintWith(key, uint64(id), ttl, o)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// TestAuthInProduction: every way to present (or fake) an identity, through
// the typed client.
func TestAuthInProduction(t *testing.T) {
	e := prodEnv(t, server.APIConfig{})
	ctx := context.Background()
	good := auth.MintOptions{Issuer: "feedd", Audience: "app"}
	for _, tc := range []struct {
		name string
		auth client.Auth
		code string // "" means the viewer is ann
	}{
		{"valid token", client.Auth{Token: e.tokenWith(secret, 1, 24*time.Hour, good)}, ""},
		{"no credentials", client.Auth{}, "UNAUTHENTICATED"},
		{"dev header refused in production", client.Auth{ViewerID: "1"}, "UNAUTHENTICATED"},
		{"expired", client.Auth{Token: e.tokenWith(secret, 1, time.Hour, good)}, "UNAUTHENTICATED"},
		{"wrong signature", client.Auth{Token: e.tokenWith([]byte("another-secret-0123456789abcdef-xx"), 1, 24*time.Hour, good)}, "UNAUTHENTICATED"},
		{"wrong audience", client.Auth{Token: e.tokenWith(secret, 1, 24*time.Hour, auth.MintOptions{Issuer: "feedd", Audience: "web"})}, "UNAUTHENTICATED"},
		{"wrong issuer", client.Auth{Token: e.tokenWith(secret, 1, 24*time.Hour, auth.MintOptions{Issuer: "evil", Audience: "app"})}, "UNAUTHENTICATED"},
		{"garbage token", client.Auth{Token: "not.a.jwt"}, "UNAUTHENTICATED"},
		{"token for a missing user", client.Auth{Token: e.tokenWith(secret, 99, 24*time.Hour, good)}, "UNAUTHENTICATED"},
	} {
		resp, err := client.Viewer(ctx, e.client(tc.auth))
		if tc.code != "" {
			wantCode(t, tc.name, err, tc.code)
			continue
		}
		if err != nil || resp.Viewer.Handle != "ann" {
			t.Errorf("%s: %v, want viewer ann", tc.name, err)
		}
	}
}

// TestLimitsThroughTheClient: the client's own operations meet each query
// limit when it is set low enough, and are refused with a code before any
// work is done.
func TestLimitsThroughTheClient(t *testing.T) {
	ctx := context.Background()
	good := auth.MintOptions{Issuer: "feedd", Audience: "app"}
	for _, tc := range []struct {
		name string
		api  server.APIConfig
		code string
	}{
		{"depth", server.APIConfig{MaxDepth: 3}, "BAD_USER_INPUT"},
		{"complexity", server.APIConfig{MaxComplexity: 50}, "BAD_USER_INPUT"},
		{"tokens", server.APIConfig{MaxTokens: 20}, "BAD_USER_INPUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := prodEnv(t, tc.api)
			c := e.client(client.Auth{Token: e.tokenWith(secret, 1, 24*time.Hour, good)})
			_, err := client.FollowingFeed(ctx, c, client.Ptr(100), nil, nil, nil)
			wantCode(t, tc.name, err, tc.code)
			// Refused before any work: the viewer's activity was not touched.
			seen, err := storetest.Keys(ctx, e.st.Client, e.st.Prefix+"seen:")
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != 0 {
				t.Errorf("%s: the refused operation read the feed", tc.name)
			}
		})
	}
}

// TestRateLimitThroughTheClient: a viewer past its allowance gets
// RATE_LIMITED with a retry hint; another viewer is unaffected. The client's
// Viewer operation costs 9 points: the allowance holds two.
func TestRateLimitThroughTheClient(t *testing.T) {
	e := prodEnv(t, server.APIConfig{RateLimit: feedcore.RateLimit{Rate: 0.01, Burst: 18}})
	ctx := context.Background()
	good := auth.MintOptions{Issuer: "feedd", Audience: "app"}
	ann := e.client(client.Auth{Token: e.tokenWith(secret, 1, 24*time.Hour, good)})
	for i := range 2 {
		if _, err := client.Viewer(ctx, ann); err != nil {
			t.Fatalf("request %d within the burst: %v", i+1, err)
		}
	}
	_, err := client.Viewer(ctx, ann)
	wantCode(t, "past the burst", err, "RATE_LIMITED")
	if list := client.Errors(err); len(list) == 0 || list[0].Extensions["retryAfterMs"] == nil {
		t.Errorf("RATE_LIMITED without retryAfterMs: %v", err)
	}
	bob := e.client(client.Auth{Token: e.tokenWith(secret, 2, 24*time.Hour, good)})
	if _, err := client.Viewer(ctx, bob); err != nil {
		t.Errorf("another viewer: %v", err)
	}
}
