package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server/reqinfo"
)

// codePersistedQueryNotFound is what Apollo-style clients look for to
// resend a hash-only request with its query text.
const codePersistedQueryNotFound apierr.Code = "PERSISTED_QUERY_NOT_FOUND"

// apqCache is the store of automatic persisted queries: the service's
// (feedcore.Service.PersistedQuery), shared by every replica; each
// registration refreshes the TTL. A text found is also kept in a small
// local LRU: a hash names one text forever, so a local copy can never be
// stale, and a warm hash-only request costs no round trip. Misses are
// never cached locally: another replica may register the query the next
// moment.
type apqCache struct {
	svc   *feedcore.Service
	ttl   time.Duration
	log   *slog.Logger
	local *lru.LRU[string]
}

var _ graphql.Cache[string] = (*apqCache)(nil)

// newAPQCache returns the APQ store of svc.
func newAPQCache(svc *feedcore.Service, ttl time.Duration, log *slog.Logger) *apqCache {
	return &apqCache{svc: svc, ttl: ttl, log: log, local: lru.New[string](1000)}
}

func (a *apqCache) Get(ctx context.Context, hash string) (string, bool) {
	if !isSHA256(hash) {
		return "", false
	}
	if q, ok := a.local.Get(ctx, hash); ok {
		return q, true
	}
	sctx, cancel := stepContext(ctx)
	defer cancel()
	q, err := a.svc.PersistedQuery(sctx, hash)
	if err != nil {
		// The client is told PERSISTED_QUERY_NOT_FOUND and resends the
		// text; if the store is down, the operation reports UNAVAILABLE.
		logStoreError(ctx, a.log, "apq: lookup failed", err)
		return "", false
	}
	if q == "" || QueryHash(q) != hash { // none, not ours, or damaged: never run it
		return "", false
	}
	a.local.Add(ctx, hash, q)
	return q, true
}

// Add is called by gqlgen's APQ extension before the query is even
// parsed. Inside an operation it only notes the registration; apqRegister
// stores it once the document has parsed, validated and passed the limits,
// so Redis never keeps a document that could not run.
func (a *apqCache) Add(ctx context.Context, hash, query string) {
	if !isSHA256(hash) {
		return
	}
	if graphql.HasOperationContext(ctx) {
		graphql.GetOperationContext(ctx).Stats.SetExtension(apqPendingKey, &apqPending{hash: hash, query: query})
		return
	}
	a.store(ctx, hash, query)
}

func (a *apqCache) store(ctx context.Context, hash, query string) {
	sctx, cancel := stepContext(ctx)
	defer cancel()
	if err := a.svc.PersistQuery(sctx, hash, query, a.ttl); err != nil {
		logStoreError(ctx, a.log, "apq: register failed", err)
		return
	}
	a.local.Add(ctx, hash, query)
}

const apqPendingKey = "feedd.apqPending"

type apqPending struct{ hash, query string }

// apqRegister stores the registration apqCache.Add noted; it is the last
// operation context mutator, so it runs only for operations that passed
// everything else. Only signed-in viewers register, each within an
// allowance of registrations (limit); an anonymous caller's operation runs
// but is not stored, so anonymous callers cannot grow Redis. A refused
// registration is RATE_LIMITED and the operation does not run. Operation
// names registered are learned as known (metric labels).
type apqRegister struct {
	cache *apqCache
	svc   *feedcore.Service
	limit feedcore.RateLimit
	known *knownOps
	log   *slog.Logger
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = apqRegister{}

func (apqRegister) ExtensionName() string                          { return "APQRegister" }
func (apqRegister) Validate(schema graphql.ExecutableSchema) error { return nil }

func (r apqRegister) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	p, ok := op.Stats.GetExtension(apqPendingKey).(*apqPending)
	if !ok {
		return nil
	}
	viewer := reqinfo.Viewer(ctx)
	if viewer == 0 {
		return nil
	}
	if r.limit.Rate > 0 {
		sctx, cancel := stepContext(ctx)
		v, err := r.svc.Spend(sctx, feedcore.Subject{Viewer: viewer, Kind: "apq"}, 1, r.limit)
		cancel()
		if err != nil {
			logStoreError(ctx, r.log, "apq: registration limit: store did not answer; not registering", err)
			return nil
		}
		if v.Err != nil {
			e := refusal(ctx, v)
			e.Message = "too many persisted query registrations: " + e.Message + "; send the query text without persistedQuery meanwhile"
			return e
		}
	}
	r.cache.store(ctx, p.hash, p.query)
	if op.Operation != nil {
		r.known.learn(op.Operation.Name)
	}
	return nil
}

// apqSizeLimit refuses a persisted query registration whose text is
// longer than max bytes with BAD_USER_INPUT, before it is even parsed.
// A query that large may still be sent without persistedQuery.
type apqSizeLimit struct{ max int }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = apqSizeLimit{}

func (apqSizeLimit) ExtensionName() string                          { return "APQSizeLimit" }
func (apqSizeLimit) Validate(schema graphql.ExecutableSchema) error { return nil }

func (l apqSizeLimit) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	if _, ok := raw.Extensions["persistedQuery"]; ok && len(raw.Query) > l.max {
		return codedError(apierr.BadInput, "a persisted query registration may hold at most %d bytes of query text, and this one has %d; send it without persistedQuery", l.max, len(raw.Query))
	}
	return nil
}

func isSHA256(h string) bool {
	if len(h) != 64 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// QueryHash is the persisted query id of a query text: its SHA-256 in hex.
func QueryHash(query string) string {
	h := sha256.Sum256([]byte(query))
	return hex.EncodeToString(h[:])
}

// LoadPersisted reads an allow-list file: a JSON object mapping each
// query's SHA-256 (hex) to its text, as tools/persisted writes it. Every
// hash is checked against its text.
func LoadPersisted(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for h, q := range m {
		if QueryHash(q) != h {
			return nil, fmt.Errorf("%s: hash %s does not match its query text", path, h)
		}
	}
	return m, nil
}

// persistedOnly is allow-list mode: an operation runs only if its text is
// in the list. A client may send the hash alone (APQ style) or the full
// text. An unknown hash alone is PERSISTED_QUERY_NOT_FOUND; a text not in
// the list is FORBIDDEN.
type persistedOnly struct{ byHash map[string]string }

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = persistedOnly{}

func (persistedOnly) ExtensionName() string                          { return "PersistedOnly" }
func (persistedOnly) Validate(schema graphql.ExecutableSchema) error { return nil }

func (p persistedOnly) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	var hash string
	if pq, ok := raw.Extensions["persistedQuery"].(map[string]any); ok {
		hash, _ = pq["sha256Hash"].(string)
	}
	if raw.Query == "" {
		q, ok := p.byHash[hash]
		if !ok {
			return &gqlerror.Error{Message: "PersistedQueryNotFound",
				Extensions: map[string]any{"code": string(codePersistedQueryNotFound)}}
		}
		raw.Query = q
		return nil
	}
	h := QueryHash(raw.Query)
	if _, ok := p.byHash[h]; !ok {
		return codedError(apierr.Forbidden, "this server runs only persisted operations, and this one is not among them")
	}
	if hash != "" && hash != h {
		return codedError(apierr.BadInput, "persistedQuery.sha256Hash does not match the query")
	}
	return nil
}
