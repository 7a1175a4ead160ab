package extension

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
	"github.com/redis/rueidis"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/reqinfo"
)

// CodePersistedQueryNotFound is what Apollo-style clients look for to
// resend a hash-only request with its query text.
const CodePersistedQueryNotFound apierr.Code = "PERSISTED_QUERY_NOT_FOUND"

// APQCache is the store of automatic persisted queries: texts that
// clients send once and then name by their SHA-256, kept in Redis under
// the service's key prefix, so a text registered through one replica is
// found by all of them; each registration refreshes the TTL, and a text not
// registered again for that long expires. A text found is also kept in a small
// local LRU: a hash names one text forever, so a local copy can never be
// stale, and a warm hash-only request costs no round trip. Misses are
// never cached locally: another replica may register the query the next
// moment.
type APQCache struct {
	svc   *feedcore.Service
	ttl   time.Duration
	log   *slog.Logger
	local *lru.LRU[string]
}

var _ graphql.Cache[string] = (*APQCache)(nil)

// NewAPQCache returns the APQ store of svc.
func NewAPQCache(svc *feedcore.Service, ttl time.Duration, log *slog.Logger) *APQCache {
	return &APQCache{svc: svc, ttl: ttl, log: log, local: lru.New[string](1000)}
}

func (a *APQCache) Get(ctx context.Context, hash string) (string, bool) {
	if !isSHA256(hash) {
		return "", false
	}
	if q, ok := a.local.Get(ctx, hash); ok {
		return q, true
	}
	sctx, cancel := stepContext(ctx)
	defer cancel()
	q, err := a.lookup(sctx, hash)
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
// parsed. Inside an operation it only notes the registration; APQRegister
// stores it once the document has parsed, validated and passed the limits,
// so Redis never keeps a document that could not run.
func (a *APQCache) Add(ctx context.Context, hash, query string) {
	if !isSHA256(hash) {
		return
	}
	if graphql.HasOperationContext(ctx) {
		graphql.GetOperationContext(ctx).Stats.SetExtension(apqPendingKey, &apqPending{hash: hash, query: query})
		return
	}
	a.store(ctx, hash, query)
}

func (a *APQCache) store(ctx context.Context, hash, query string) {
	sctx, cancel := stepContext(ctx)
	defer cancel()
	if err := a.register(sctx, hash, query); err != nil {
		logStoreError(ctx, a.log, "apq: register failed", err)
		return
	}
	a.local.Add(ctx, hash, query)
}

// lookup returns the text registered under hash, or "" when none is
// (never registered, or expired).
func (a *APQCache) lookup(ctx context.Context, hash string) (string, error) {
	c := a.svc.Client()
	q, err := c.Do(ctx, c.B().Get().Key(a.svc.Keys.PersistedQuery(hash)).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read persisted query %s: %w", hash, err)
	}
	return q, nil
}

// register stores text under hash for the TTL; registering it again
// starts the TTL over.
func (a *APQCache) register(ctx context.Context, hash, text string) error {
	c := a.svc.Client()
	if err := c.Do(ctx, c.B().Set().Key(a.svc.Keys.PersistedQuery(hash)).Value(text).Ex(a.ttl).Build()).Error(); err != nil {
		return fmt.Errorf("register persisted query %s: %w", hash, err)
	}
	return nil
}

const apqPendingKey = "feedd.apqPending"

type apqPending struct{ hash, query string }

// APQRegister stores the registration APQCache.Add noted; it is the last
// operation context mutator, so it runs only for operations that passed
// everything else. Only signed-in viewers register, each within an
// allowance of registrations (Limit); an anonymous caller's operation runs
// but is not stored, so anonymous callers cannot grow Redis. A refused
// registration is RATE_LIMITED and the operation does not run. Operation
// names registered are learned as known (metric labels).
type APQRegister struct {
	anySchema
	Cache   *APQCache
	Service *feedcore.Service
	Limit   feedcore.RateLimit
	Known   *KnownOps
	Logger  *slog.Logger
}

func (APQRegister) ExtensionName() string { return "APQRegister" }

func (r APQRegister) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	p, ok := op.Stats.GetExtension(apqPendingKey).(*apqPending)
	if !ok {
		return nil
	}
	viewer := reqinfo.Viewer(ctx)
	if viewer == 0 {
		return nil
	}
	if r.Limit.Rate > 0 {
		sctx, cancel := stepContext(ctx)
		v, err := r.Service.Spend(sctx, feedcore.Subject{Viewer: viewer, Kind: "apq"}, 1, r.Limit)
		cancel()
		if err != nil {
			logStoreError(ctx, r.Logger, "apq: registration limit: store did not answer; not registering", err)
			return nil
		}
		if v.Err != nil {
			e := refusal(ctx, v)
			e.Message = "too many persisted query registrations: " + e.Message + "; send the query text without persistedQuery meanwhile"
			return e
		}
	}
	r.Cache.store(ctx, p.hash, p.query)
	if op.Operation != nil {
		r.Known.learn(op.Operation.Name)
	}
	return nil
}

// APQSizeLimit refuses a persisted query registration whose text is
// longer than Max bytes with BAD_USER_INPUT, before it is even parsed.
// A query that large may still be sent without persistedQuery.
type APQSizeLimit struct {
	anySchema
	Max int
}

func (APQSizeLimit) ExtensionName() string { return "APQSizeLimit" }

func (l APQSizeLimit) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	if _, ok := raw.Extensions["persistedQuery"]; ok && len(raw.Query) > l.Max {
		return CodedError(apierr.BadInput, "a persisted query registration may hold at most %d bytes of query text, and this one has %d; send it without persistedQuery", l.Max, len(raw.Query))
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

// PersistedOnly is allow-list mode: an operation runs only if its text is
// in the list. A client may send the hash alone (APQ style) or the full
// text. An unknown hash alone is PERSISTED_QUERY_NOT_FOUND; a text not in
// the list is FORBIDDEN.
type PersistedOnly struct {
	anySchema
	ByHash map[string]string
}

func (PersistedOnly) ExtensionName() string { return "PersistedOnly" }

func (p PersistedOnly) MutateOperationParameters(ctx context.Context, raw *graphql.RawParams) *gqlerror.Error {
	var hash string
	if pq, ok := raw.Extensions["persistedQuery"].(map[string]any); ok {
		hash, _ = pq["sha256Hash"].(string)
	}
	if raw.Query == "" {
		q, ok := p.ByHash[hash]
		if !ok {
			return &gqlerror.Error{Message: "PersistedQueryNotFound",
				Extensions: map[string]any{"code": string(CodePersistedQueryNotFound)}}
		}
		raw.Query = q
		return nil
	}
	h := QueryHash(raw.Query)
	if _, ok := p.ByHash[h]; !ok {
		return CodedError(apierr.Forbidden, "this server runs only persisted operations, and this one is not among them")
	}
	if hash != "" && hash != h {
		return CodedError(apierr.BadInput, "persistedQuery.sha256Hash does not match the query")
	}
	return nil
}
