package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

// apiFlags configure the production API surface of /query (server.APIConfig):
// query limits, per-viewer rate limiting, CORS, introspection and
// persisted queries.
type apiFlags struct {
	maxDepth      int
	maxComplexity int
	maxTokens     int
	maxBody       int64
	rate          float64
	burst         int
	corsOrigins   string
	introspection bool
	apq           bool
	apqTTL        time.Duration
	persistedOnly string
}

func addAPIFlags(fs *flag.FlagSet) *apiFlags {
	a := &apiFlags{}
	fs.IntVar(&a.maxDepth, "max-depth", server.DefaultMaxDepth, "deepest selection nesting a GraphQL operation may have, fragments included; 0: no limit")
	fs.IntVar(&a.maxComplexity, "max-complexity", server.DefaultMaxComplexity, "highest cost of a GraphQL operation (a connection costs its page size times its edge); 0: no limit")
	fs.IntVar(&a.maxTokens, "max-tokens", server.DefaultMaxTokens, "most lexer tokens in a GraphQL document; 0: no limit")
	fs.Int64Var(&a.maxBody, "max-body", server.DefaultMaxBodyBytes, "largest GraphQL POST body, in bytes")
	fs.Float64Var(&a.rate, "rate-limit", 50, "GraphQL operations a second each signed-in viewer may make, averaged (shared by all replicas); 0: no limit")
	fs.IntVar(&a.burst, "rate-burst", 100, "operations a viewer may make at once above --rate-limit")
	fs.StringVar(&a.corsOrigins, "cors-origins", "", "comma-separated browser origins (https://app.example.com) that may call /query besides this server's own; * allows any; empty: same origin only")
	fs.BoolVar(&a.introspection, "introspection", false, "answer GraphQL introspection (__schema, __type) (default true only with --dev-auth)")
	fs.BoolVar(&a.apq, "apq", true, "accept automatic persisted queries (hashes registered in Redis, shared by all replicas)")
	fs.DurationVar(&a.apqTTL, "apq-ttl", server.DefaultAPQTTL, "how long an automatic persisted query stays registered")
	fs.StringVar(&a.persistedOnly, "persisted-only", "", "JSON file of sha256 -> query (client/persisted.json, from go run ./tools/persisted): run only these operations")
	return a
}

// config turns the flags into the server's APIConfig. set names the flags
// given explicitly; dev says whether dev auth is on, which turns
// introspection on unless --introspection says otherwise.
func (a *apiFlags) config(set map[string]bool, dev bool) (server.APIConfig, error) {
	switch {
	case a.maxDepth < 0:
		return server.APIConfig{}, errors.New("--max-depth must be 0 or more")
	case a.maxComplexity < 0:
		return server.APIConfig{}, errors.New("--max-complexity must be 0 or more")
	case a.maxTokens < 0:
		return server.APIConfig{}, errors.New("--max-tokens must be 0 or more")
	case a.maxBody < 1:
		return server.APIConfig{}, errors.New("--max-body must be at least 1")
	case a.rate < 0:
		return server.APIConfig{}, errors.New("--rate-limit must be 0 or more")
	case a.rate > 0 && a.burst < 1:
		return server.APIConfig{}, errors.New("--rate-burst must be at least 1")
	case a.apqTTL <= 0:
		return server.APIConfig{}, errors.New("--apq-ttl must be positive")
	}
	// In APIConfig 0 means the default and a negative value no limit.
	off := func(n int) int {
		if n == 0 {
			return -1
		}
		return n
	}
	c := server.APIConfig{
		MaxDepth:      off(a.maxDepth),
		MaxComplexity: off(a.maxComplexity),
		MaxTokens:     off(a.maxTokens),
		MaxBodyBytes:  a.maxBody,
		RateLimit:     feedcore.RateLimit{Rate: a.rate, Burst: a.burst},
		DisableAPQ:    !a.apq,
		APQTTL:        a.apqTTL,
	}
	introspection := a.introspection
	if !set["introspection"] {
		introspection = dev
	}
	c.DisableIntrospection = !introspection
	for _, o := range strings.Split(a.corsOrigins, ",") {
		o = strings.TrimSpace(o)
		if o == "" {
			continue
		}
		if o != "*" {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
				return server.APIConfig{}, fmt.Errorf("--cors-origins: %q is not an origin like https://app.example.com", o)
			}
		}
		c.CORSOrigins = append(c.CORSOrigins, o)
	}
	if a.persistedOnly != "" {
		m, err := server.LoadPersisted(a.persistedOnly)
		if err != nil {
			return server.APIConfig{}, fmt.Errorf("--persisted-only: %w", err)
		}
		c.PersistedOnly = m
	}
	return c, nil
}
