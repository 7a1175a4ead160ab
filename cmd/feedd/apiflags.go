package main

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
	"github.com/feedd/feedd/server/extension"
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
	anonRate      float64
	anonBurst     int
	baseCost      int
	maxMutations  int
	proxyHeader   string
	proxies       string
	apqMaxBytes   int
	apqRegRate    float64
	apqRegBurst   int
	reportRate    float64
	reportBurst   int
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
	fs.Float64Var(&a.rate, "rate-limit", server.DefaultRateLimit.Rate, "cost points a second refilled into each signed-in viewer's allowance, shared by all replicas; operations spend their cost (see --max-complexity); 0: no limit")
	fs.IntVar(&a.burst, "rate-burst", server.DefaultRateLimit.Burst, "cost points a viewer's allowance holds at most (an operation costing more spends all of it)")
	fs.Float64Var(&a.anonRate, "anon-rate-limit", server.DefaultAnonRateLimit.Rate, "cost points a second refilled into each client address's allowance, which callers without a valid identity (anonymous, or with refused credentials) spend; 0: no limit (default a tenth of --rate-limit)")
	fs.IntVar(&a.anonBurst, "anon-rate-burst", server.DefaultAnonRateLimit.Burst, "cost points a client address's allowance holds at most (default a tenth of --rate-burst)")
	fs.IntVar(&a.baseCost, "request-base-cost", server.DefaultRequestBaseCost, "cost points every request spends at least, refused ones included (parse and validation errors, depth and introspection refusals)")
	fs.IntVar(&a.maxMutations, "max-mutations", server.DefaultMaxMutations, "most mutation fields in one operation, aliases included; 0: no limit")
	fs.StringVar(&a.proxyHeader, "trusted-proxy-header", "", "header (X-Forwarded-For) that reverse proxies in --trusted-proxies append the client address to; empty: the TCP peer is the client")
	fs.StringVar(&a.proxies, "trusted-proxies", "", "comma-separated networks (10.0.0.0/8, 192.0.2.7/32) of the reverse proxies whose --trusted-proxy-header is believed")
	fs.IntVar(&a.apqMaxBytes, "apq-max-bytes", server.DefaultAPQMaxBytes, "longest query text, in bytes, an automatic persisted query registration may hold")
	fs.Float64Var(&a.apqRegRate, "apq-register-rate", server.DefaultAPQRegisterLimit.Rate*60, "persisted query registrations a minute each signed-in viewer may make after --apq-register-burst (anonymous callers never register); 0: no limit")
	fs.IntVar(&a.apqRegBurst, "apq-register-burst", server.DefaultAPQRegisterLimit.Burst, "persisted query registrations a viewer may make at once")
	fs.Float64Var(&a.reportRate, "report-rate", server.DefaultReportLimit.Rate*60, "reports (the report mutation) a minute each signed-in viewer may file after --report-burst; 0: no limit")
	fs.IntVar(&a.reportBurst, "report-burst", server.DefaultReportLimit.Burst, "reports a viewer may file at once")
	fs.StringVar(&a.corsOrigins, "cors-origins", "", "comma-separated browser origins (https://app.example.com) that may call /query besides this server's own; * allows any; empty: same origin only")
	fs.BoolVar(&a.introspection, "introspection", false, "answer GraphQL introspection (__schema, __type) (default true only with --dev-auth)")
	fs.BoolVar(&a.apq, "apq", true, "accept automatic persisted queries (hashes registered in Redis, shared by all replicas)")
	fs.DurationVar(&a.apqTTL, "apq-ttl", server.DefaultAPQTTL, "how long an automatic persisted query stays registered")
	fs.StringVar(&a.persistedOnly, "persisted-only", "", "JSON file of sha256 -> query (client/persisted/persisted.json, from go run ./tools/persisted): run only these operations")
	return a
}

// check refuses the first broken flag value, in the order listed.
func (a *apiFlags) check() error {
	return firstBroken(
		flagRule{a.maxDepth < 0, "--max-depth must be 0 or more"},
		flagRule{a.maxComplexity < 0, "--max-complexity must be 0 or more"},
		flagRule{a.maxTokens < 0, "--max-tokens must be 0 or more"},
		flagRule{a.maxBody < 1, "--max-body must be at least 1"},
		flagRule{a.rate < 0, "--rate-limit must be 0 or more"},
		flagRule{a.rate > 0 && a.burst < 1, "--rate-burst must be at least 1"},
		flagRule{a.anonRate < 0, "--anon-rate-limit must be 0 or more"},
		flagRule{a.anonRate > 0 && a.anonBurst < 1, "--anon-rate-burst must be at least 1"},
		flagRule{a.baseCost < 0, "--request-base-cost must be 0 or more"},
		flagRule{a.maxMutations < 0, "--max-mutations must be 0 or more"},
		flagRule{a.apqMaxBytes < 1, "--apq-max-bytes must be at least 1"},
		flagRule{a.apqRegRate < 0, "--apq-register-rate must be 0 or more"},
		flagRule{a.apqRegRate > 0 && a.apqRegBurst < 1, "--apq-register-burst must be at least 1"},
		flagRule{a.apqTTL <= 0, "--apq-ttl must be positive"},
		flagRule{a.reportRate < 0, "--report-rate must be 0 or more"},
		flagRule{a.reportRate > 0 && a.reportBurst < 1, "--report-burst must be at least 1"},
	)
}

// config turns the flags into the server's APIConfig. set names the flags
// given explicitly; dev says whether dev auth is on, which turns
// introspection on unless --introspection says otherwise. The anonymous
// allowance not given is a tenth of the viewer's.
func (a *apiFlags) config(set map[string]bool, dev bool) (server.APIConfig, error) {
	if !set["anon-rate-limit"] {
		a.anonRate = a.rate / 10
	}
	if !set["anon-rate-burst"] {
		a.anonBurst = max(a.burst/10, 1)
	}
	if err := a.check(); err != nil {
		return server.APIConfig{}, err
	}
	// In APIConfig 0 means the default and a negative value no limit.
	off := func(n int) int {
		if n == 0 {
			return -1
		}
		return n
	}
	c := server.APIConfig{
		MaxDepth:         off(a.maxDepth),
		MaxComplexity:    off(a.maxComplexity),
		MaxTokens:        off(a.maxTokens),
		MaxBodyBytes:     a.maxBody,
		RateLimit:        feedcore.RateLimit{Rate: a.rate, Burst: a.burst},
		AnonRateLimit:    feedcore.RateLimit{Rate: a.anonRate, Burst: a.anonBurst},
		RequestBaseCost:  a.baseCost,
		DisableAPQ:       !a.apq,
		APQTTL:           a.apqTTL,
		MaxMutations:     off(a.maxMutations),
		APQMaxBytes:      a.apqMaxBytes,
		APQRegisterLimit: feedcore.RateLimit{Rate: a.apqRegRate / 60, Burst: a.apqRegBurst},
	}
	if a.apqRegRate == 0 {
		c.APQRegisterLimit = feedcore.RateLimit{Rate: -1}
	}
	c.ReportLimit = feedcore.RateLimit{Rate: a.reportRate / 60, Burst: a.reportBurst}
	if a.reportRate == 0 {
		c.ReportLimit = feedcore.RateLimit{Rate: -1}
	}
	if a.anonRate == 0 { // in APIConfig, zero is the viewer's
		c.AnonRateLimit = feedcore.RateLimit{Rate: -1}
	}
	for _, p := range strings.Split(a.proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := netip.ParsePrefix(p)
		if err != nil {
			if ip, err2 := netip.ParseAddr(p); err2 == nil {
				n = netip.PrefixFrom(ip, ip.BitLen())
			} else {
				return server.APIConfig{}, fmt.Errorf("--trusted-proxies: %q is not a network like 10.0.0.0/8 or an address", p)
			}
		}
		c.TrustedProxies = append(c.TrustedProxies, n.Masked())
	}
	c.TrustedProxyHeader = strings.TrimSpace(a.proxyHeader)
	if (c.TrustedProxyHeader == "") != (len(c.TrustedProxies) == 0) {
		return server.APIConfig{}, errors.New("--trusted-proxy-header and --trusted-proxies go together: name the header and the proxies that set it")
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
		m, err := extension.LoadPersisted(a.persistedOnly)
		if err != nil {
			return server.APIConfig{}, fmt.Errorf("--persisted-only: %w", err)
		}
		c.PersistedOnly = m
	}
	return c, nil
}
