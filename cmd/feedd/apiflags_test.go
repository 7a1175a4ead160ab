package main

import (
	"flag"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

func TestAPIFlags(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		args  []string
		dev   bool
		check func(t *testing.T, c server.APIConfig)
		err   string
	}{
		{name: "defaults, production", check: func(t *testing.T, c server.APIConfig) {
			if c.MaxDepth != 12 || c.MaxComplexity != 5000 || c.MaxTokens != 10000 || c.MaxBodyBytes != 1<<20 {
				t.Errorf("limits = %+v", c)
			}
			if c.RateLimit != server.DefaultRateLimit || c.MaxMutations != 5 || c.APQMaxBytes != 16<<10 || c.APQRegisterLimit.Burst != 20 || c.TrustedProxyHeader != "" || !c.DisableIntrospection || c.DisableAPQ || c.PersistedOnly != nil || c.CORSOrigins != nil {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "anonymous allowance and base cost, production", check: func(t *testing.T, c server.APIConfig) {
			if c.AnonRateLimit != server.DefaultAnonRateLimit || c.AnonRateLimit.Rate != c.RateLimit.Rate/10 || c.RequestBaseCost != 10 {
				t.Errorf("anonymous allowance %+v, base cost %d", c.AnonRateLimit, c.RequestBaseCost)
			}
		}},
		{name: "anonymous allowance follows the viewer's", args: []string{"--rate-limit", "500", "--rate-burst", "3000"}, check: func(t *testing.T, c server.APIConfig) {
			if c.AnonRateLimit != (feedcore.RateLimit{Rate: 50, Burst: 300}) {
				t.Errorf("anonymous allowance %+v, want a tenth of 500/s, 3000", c.AnonRateLimit)
			}
		}},
		{name: "anonymous allowance given", env: map[string]string{"FEED_ANON_RATE_BURST": "70"}, args: []string{"--anon-rate-limit", "7", "--request-base-cost", "0"},
			check: func(t *testing.T, c server.APIConfig) {
				if c.AnonRateLimit != (feedcore.RateLimit{Rate: 7, Burst: 70}) || c.RequestBaseCost != 0 {
					t.Errorf("anonymous allowance %+v, base cost %d", c.AnonRateLimit, c.RequestBaseCost)
				}
			}},
		{name: "no rate limit, no anonymous one", args: []string{"--rate-limit", "0"}, check: func(t *testing.T, c server.APIConfig) {
			if c.RateLimit.Rate != 0 || c.AnonRateLimit.Rate >= 0 {
				t.Errorf("rate limits %+v, %+v: both off wanted", c.RateLimit, c.AnonRateLimit)
			}
		}},
		{name: "bad anonymous burst", args: []string{"--anon-rate-burst", "0"}, err: "--anon-rate-burst"},
		{name: "bad base cost", args: []string{"--request-base-cost", "-1"}, err: "--request-base-cost"},
		{name: "dev auth turns introspection on", dev: true, check: func(t *testing.T, c server.APIConfig) {
			if c.DisableIntrospection {
				t.Error("introspection off with dev auth")
			}
		}},
		{name: "explicit introspection wins", dev: true, args: []string{"--introspection=false"}, check: func(t *testing.T, c server.APIConfig) {
			if !c.DisableIntrospection {
				t.Error("introspection on")
			}
		}},
		{name: "environment", env: map[string]string{"FEED_CORS_ORIGINS": "https://a.example, https://b.example:8443", "FEED_RATE_LIMIT": "0", "FEED_MAX_DEPTH": "0", "FEED_INTROSPECTION": "true"},
			check: func(t *testing.T, c server.APIConfig) {
				if len(c.CORSOrigins) != 2 || c.CORSOrigins[1] != "https://b.example:8443" || c.RateLimit.Rate != 0 || c.MaxDepth >= 0 || c.DisableIntrospection {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "allow-list", args: []string{"--persisted-only", "../../client/persisted/persisted.json", "--apq=false"}, check: func(t *testing.T, c server.APIConfig) {
			if len(c.PersistedOnly) == 0 || !c.DisableAPQ {
				t.Errorf("config = %+v", c)
			}
		}},
		{name: "bad origin", args: []string{"--cors-origins", "app.example.com"}, err: "--cors-origins"},
		{name: "origin with a path", args: []string{"--cors-origins", "https://app.example.com/x"}, err: "--cors-origins"},
		{name: "bad body", args: []string{"--max-body", "0"}, err: "--max-body"},
		{name: "bad burst", args: []string{"--rate-burst", "0"}, err: "--rate-burst"},
		{name: "trusted proxies", args: []string{"--trusted-proxy-header", "X-Forwarded-For", "--trusted-proxies", "10.0.0.0/8, 192.0.2.7", "--max-mutations", "0"},
			check: func(t *testing.T, c server.APIConfig) {
				if c.TrustedProxyHeader != "X-Forwarded-For" || len(c.TrustedProxies) != 2 || c.TrustedProxies[1].String() != "192.0.2.7/32" || c.MaxMutations >= 0 {
					t.Errorf("config = %+v", c)
				}
			}},
		{name: "proxy header without proxies", args: []string{"--trusted-proxy-header", "X-Forwarded-For"}, err: "--trusted-proxies"},
		{name: "bad proxy network", args: []string{"--trusted-proxy-header", "X-Forwarded-For", "--trusted-proxies", "10.0.0.0/99"}, err: "--trusted-proxies"},
		{name: "bad apq size", args: []string{"--apq-max-bytes", "0"}, err: "--apq-max-bytes"},
		{name: "missing allow-list", args: []string{"--persisted-only", "nope.json"}, err: "--persisted-only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			a := addAPIFlags(fs)
			set, err := parse(fs, c.args)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := a.config(set, c.dev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg)
		})
	}
}
