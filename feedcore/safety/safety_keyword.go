package safety

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// Keyword filters: posts and live sessions whose text or title matches one
// of a viewer's keywords (package keyword) leave the viewer's feeds; its
// own posts stay.
//
// The filters are a record in the viewer's slot: the hash kf of filter id
// to "w created expires keyword" (w 1 for whole word, times in ms, expires
// 0 for never), and beside it kfv, a token of 8 random bytes that every
// change replaces (so it never repeats, even after a restored or rebuilt
// Redis; it is deleted with the last filter). A page's first round trip
// sends the token of the set this replica has compiled for the viewer
// (luaKeywordView, in the script that reads the viewer's relations,
// safety_filter.go) and gets back only the token when it is the current one,
// the whole list when it is not: a change applies to the next page on
// every replica, no replica keeps a stale copy, no page pays a round trip
// for it, and a warm page pays a few bytes. Compiled sets are kept in a
// bounded LRU per process (Service.keywords).
//
// A filter's id is derived from its owner and its normalized keyword
// (keywordFilterID): adding a keyword the viewer already filters, in any
// spelling that normalizes the same, updates that filter (wholeWord and
// expiresAt; createdAt stays) and returns it, rather than adding a second.
// An expired filter stops applying at once (every check compares its end
// with the service clock), is not listed or found, does not count toward
// the limit, and is pruned by the viewer's next add.

// The limits of keyword filters.
const (
	MaxKeywordFilters = 100 // filters per viewer, expired ones not counted
	MaxKeywordLen     = 100 // characters of a keyword, once trimmed
	// maxKeywordBytes bounds a keyword once normalized, which may be longer
	// than as given (NFKC spells out some characters: "㍿" is four):
	// what MaxKeywordLen characters take at most in UTF-8. It bounds what
	// one compiled filter holds in memory.
	maxKeywordBytes = 4 * MaxKeywordLen
)

// KeywordFilterID is the id of owner's filter of the normalized keyword
// word: 63 bits of a SHA-256, never 0.
func KeywordFilterID(owner store.ID, word string) store.ID {
	h := sha256.New()
	h.Write(binary.BigEndian.AppendUint64(nil, owner))
	h.Write([]byte(word))
	id := binary.BigEndian.Uint64(h.Sum(nil)) >> 1
	return max(id, 1)
}

// newKeywordVersion is a fresh version token for a viewer's filters.
func newKeywordVersion() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return string(b[:])
}

// luaKeywordExpires: expires(rec) is a record's end (ms, 0 for none), and
// expired(rec, now) whether it has passed.
const luaKeywordExpires = `
local function expires(rec) return tonumber(string.match(rec, '^%d+ %d+ (%d+) ')) or 0 end
local function expired(rec, now) local e = expires(rec); return e > 0 and e <= now end
`

// keywordAdd adds or updates filter ARGV[1] in the filters KEYS[1]
// (record "ARGV[3] created ARGV[4] ARGV[8]") and sets the version KEYS[2]
// to ARGV[7]. Filters expired at ARGV[2] (ms) are pruned first; a new
// filter is created at ARGV[5], unless ARGV[6] others are in force
// already: then nothing changes and it replies -1. An existing one keeps
// its creation time. Replies the filter's creation time.
var keywordAdd = store.NewScript(false, luaKeywordExpires+`
local now, n, created = tonumber(ARGV[2]), 0, nil
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if expired(all[i + 1], now) then
    redis.call('HDEL', KEYS[1], all[i])
  else
    n = n + 1
    if all[i] == ARGV[1] then created = string.match(all[i + 1], '^%d+ (%d+) ') end
  end
end
if not created then
  if n >= tonumber(ARGV[6]) then return -1 end
  created = ARGV[5]
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3] .. ' ' .. created .. ' ' .. ARGV[4] .. ' ' .. ARGV[8])
redis.call('SET', KEYS[2], ARGV[7])
return tonumber(created)
`)

// keywordRemove removes filter ARGV[1] from the filters KEYS[1] and sets
// the version KEYS[2] to ARGV[3] (deletes it with the last filter).
// Replies 1, or 0 when there was no such filter in force at ARGV[2] (ms).
var keywordRemove = store.NewScript(false, luaKeywordExpires+`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('HLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2])
else
  redis.call('SET', KEYS[2], ARGV[3])
end
if expired(rec, tonumber(ARGV[2])) then return 0 end
return 1
`)

// keywordRecords replies the filters KEYS[1] (flat) and their version
// KEYS[2] (empty when none), read together: {version, {id, record, ...}}.
var keywordRecords = store.NewScript(true, `
return {redis.call('GET', KEYS[2]) or '', redis.call('HGETALL', KEYS[1])}
`)

// keywordReplace replaces the filters KEYS[1] with ARGV[3..] (id, record,
// ...) and their version KEYS[2] with ARGV[2] (none: both deleted), if the
// version is still ARGV[1] (empty: none). Replies 1 if it did.
var keywordReplace = store.NewScript(false, `
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2])
if #ARGV > 2 then
  redis.call('HSET', KEYS[1], unpack(ARGV, 3))
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
`)

// checkKeywordFilter checks f as an add takes it, at now (ms), and returns
// it with its keyword trimmed, and the keyword normalized.
func checkKeywordFilter(f core.KeywordFilter, now int64) (core.KeywordFilter, string, error) {
	kw, err := content.CheckText("keyword", f.Keyword, MaxKeywordLen)
	if err != nil {
		return f, "", err
	}
	f.Keyword = kw
	word := keyword.Normalize(kw)
	switch {
	case word == "":
		return f, "", apierr.Errorf(apierr.BadInput, "keyword normalizes to nothing; give a word to filter")
	case len(word) > maxKeywordBytes:
		return f, "", apierr.Errorf(apierr.BadInput, "keyword is %d bytes long once normalized; at most %d are allowed", len(word), maxKeywordBytes)
	case f.ExpiresAt != nil && f.ExpiresAt.UnixMilli() <= now:
		return f, "", apierr.Errorf(apierr.BadInput, "expiresAt must be in the future")
	case f.ExpiresAt != nil:
		at := time.UnixMilli(f.ExpiresAt.UnixMilli()).UTC() // as stored
		f.ExpiresAt = &at
	}
	return f, word, nil
}

// keywordAddCmd is the add of f, checked, normalized word, as new at
// created (ms) unless it exists, at now.
func (s *Service) keywordAddCmd(f core.KeywordFilter, word string, now, created int64) (keys, args []string) {
	w, expires := keywordFields(f)
	id := KeywordFilterID(f.User, word)
	return s.KeywordKeys(f.User), []string{store.FormatID(id), core.Itoa64(now), w, expires, core.Itoa64(created),
		store.Itoa(MaxKeywordFilters), newKeywordVersion(), f.Keyword}
}

// errKeywordLimit is an add past MaxKeywordFilters.
func errKeywordLimit() error {
	return apierr.Errorf(apierr.BadInput, "you have %d keyword filters, the most allowed; remove one first (expired ones do not count)", MaxKeywordFilters)
}

// AddKeywordFilter adds a keyword filter for f.User (the viewer): posts
// and live titles matching f.Keyword leave its feeds from its next page,
// until f.ExpiresAt (nil: until removed; else it must be in the future).
// The keyword is trimmed, 1 to MaxKeywordLen characters, and the viewer
// has at most MaxKeywordFilters. Adding a keyword the viewer filters
// already updates that filter. It returns the filter as stored.
func (s *Service) AddKeywordFilter(ctx context.Context, f core.KeywordFilter) (_ *core.KeywordFilter, err error) {
	defer store.Wrap(&err, "user %d adds a keyword filter", f.User)
	if f.User == 0 {
		return nil, apierr.Errorf(apierr.Unauthenticated, "sign in to filter keywords")
	}
	now := s.NowMS()
	f, word, err := checkKeywordFilter(f, now)
	if err != nil {
		return nil, err
	}
	keys, args := s.keywordAddCmd(f, word, now, now)
	created, err := s.Commit(ctx, keywordAdd, keys, args, keywordAdd.Cmd(s.Redis.B(), keys, args)).AsInt64()
	if err != nil {
		return nil, fmt.Errorf("record the filter: %w", err)
	}
	if created < 0 {
		return nil, errKeywordLimit()
	}
	f.ID = KeywordFilterID(f.User, word)
	f.CreatedAt = time.UnixMilli(created).UTC()
	s.Notify(ctx, core.Notice{Kind: core.NoticeViews, Readers: []store.ID{f.User}})
	return &f, nil
}

// RemoveKeywordFilter removes viewer's filter id: NOT_FOUND when the
// viewer has no such filter in force (another's, removed, expired).
func (s *Service) RemoveKeywordFilter(ctx context.Context, viewer, id store.ID) (err error) {
	defer store.Wrap(&err, "user %d removes keyword filter %d", viewer, id)
	if viewer == 0 {
		return apierr.Errorf(apierr.Unauthenticated, "sign in to filter keywords")
	}
	keys, args := s.KeywordKeys(viewer), []string{store.FormatID(id), core.Itoa64(s.NowMS()), newKeywordVersion()}
	n, err := s.Commit(ctx, keywordRemove, keys, args, keywordRemove.Cmd(s.Redis.B(), keys, args)).AsInt64()
	if err != nil {
		return fmt.Errorf("remove the filter: %w", err)
	}
	if n == 0 {
		return errNoKeywordFilter(id)
	}
	s.Notify(ctx, core.Notice{Kind: core.NoticeViews, Readers: []store.ID{viewer}})
	return nil
}

func errNoKeywordFilter(id store.ID) error {
	return apierr.Errorf(apierr.NotFound, "you have no keyword filter %d", id)
}

// KeywordFilters returns viewer's filters in force, newest first.
func (s *Service) KeywordFilters(ctx context.Context, viewer store.ID) (_ []core.KeywordFilter, err error) {
	defer store.Wrap(&err, "list the keyword filters of user %d", viewer)
	m, err := s.Do(ctx, s.Redis.B().Hgetall().Key(s.Keys.KeywordFilters(viewer)).Build()).AsStrMap()
	if err != nil {
		return nil, err
	}
	return s.keywordFiltersIn(viewer, m), nil
}

// keywordFiltersIn reads viewer's filters hash m: those in force now,
// newest first. Malformed records are left out.
func (s *Service) keywordFiltersIn(viewer store.ID, m map[string]string) []core.KeywordFilter {
	now := s.NowMS()
	out := make([]core.KeywordFilter, 0, len(m))
	for id, rec := range m {
		if f, ok := timeline.ParseKeywordFilter(viewer, id, rec); ok && inForce(f, now) {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b core.KeywordFilter) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out
}

// KeywordFilter returns viewer's filter id, or NOT_FOUND when the viewer
// has no such filter in force: another viewer's filter is not found.
func (s *Service) KeywordFilter(ctx context.Context, viewer, id store.ID) (_ *core.KeywordFilter, err error) {
	defer store.Wrap(&err, "read keyword filter %d of user %d", id, viewer)
	if viewer == 0 {
		return nil, errNoKeywordFilter(id)
	}
	rec, err := s.Do(ctx, s.Redis.B().Hget().Key(s.Keys.KeywordFilters(viewer)).Field(store.FormatID(id)).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return nil, errNoKeywordFilter(id)
	}
	if err != nil {
		return nil, err
	}
	f, ok := timeline.ParseKeywordFilter(viewer, store.FormatID(id), rec)
	if !ok || !inForce(f, s.NowMS()) {
		return nil, errNoKeywordFilter(id)
	}
	return &f, nil
}

func inForce(f core.KeywordFilter, now int64) bool {
	return f.ExpiresAt == nil || f.ExpiresAt.UnixMilli() > now
}

// PutKeywordFilters records filters as AddKeywordFilter does (import):
// each owner must exist, CreatedAt is kept (zero: now), and one expired
// already is skipped. It returns how many were applied before the first
// refused (bad input, a missing user, the limit) with the refusal; those
// after a refusal at the limit may have been applied too, harmlessly.
func (s *Service) PutKeywordFilters(ctx context.Context, fs []core.KeywordFilter) (_ int, err error) {
	defer store.Wrap(&err, "record keyword filters")
	now := s.NowMS()
	var stop error
	type add struct {
		at         int // index in fs
		keys, args []string
	}
	var adds []add
	for i, f := range fs {
		if f.ExpiresAt != nil && f.ExpiresAt.UnixMilli() <= now {
			continue
		}
		f, word, err := checkKeywordFilter(f, now)
		if err == nil && f.User == 0 {
			err = apierr.Errorf(apierr.BadInput, "a keyword filter needs a positive user id")
		}
		if err != nil {
			fs, stop = fs[:i], err
			break
		}
		created := now
		if !f.CreatedAt.IsZero() {
			created = f.CreatedAt.UnixMilli()
		}
		keys, args := s.keywordAddCmd(f, word, now, created)
		adds = append(adds, add{i, keys, args})
	}
	owners := store.CmdsFor(adds, func(a add) store.ID { return fs[a.at].User })
	if n, err := s.Existing(ctx, owners); err != nil {
		return 0, err
	} else if n < len(owners) {
		fs, stop = fs[:adds[n].at], apierr.Errorf(apierr.NotFound, "no user with id %d", owners[n])
		adds = adds[:n]
	}
	cmds := store.CmdsFor(adds, func(a add) rueidis.Completed { return keywordAdd.Cmd(s.Redis.B(), a.keys, a.args) })
	for i, r := range s.DoMulti(ctx, cmds...) {
		created, err := r.AsInt64()
		if err != nil {
			return adds[i].at, err
		}
		if created < 0 {
			return adds[i].at, fmt.Errorf("user %d: %w", fs[adds[i].at].User, errKeywordLimit())
		}
	}
	return len(fs), stop
}

// ExportKeywordFilters writes the filters in force of users ids.
func (s *Service) ExportKeywordFilters(ctx context.Context, ids []store.ID, sink core.ExportSink) error {
	if sink.KeywordFilter == nil {
		return nil
	}
	hgetall := func(id store.ID) rueidis.Completed {
		return s.Redis.B().Hgetall().Key(s.Keys.KeywordFilters(id)).Build()
	}
	for i, r := range s.DoMulti(ctx, store.CmdsFor(ids, hgetall)...) {
		m, err := r.AsStrMap()
		if err != nil {
			return err
		}
		for _, f := range s.keywordFiltersIn(ids[i], m) {
			if err := sink.KeywordFilter(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// RebuildKeywordFilters brings each user's filters to what the records
// say now: expired ones pruned, ids derived again from the keywords (the
// normalization follows the Unicode version of golang.org/x/text; two
// that now normalize the same are one, the newer), a version token where
// filters lack one. A user whose filters are so already is left alone;
// one whose filters changed since they were read is left to that change.
func (s *Service) RebuildKeywordFilters(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	read := func(u store.ID) rueidis.Completed { return keywordRecords.Cmd(s.Redis.B(), s.KeywordKeys(u), nil) }
	var cmds []rueidis.Completed
	for i, r := range s.DoMulti(ctx, store.CmdsFor(users, read)...) {
		arr, err := r.ToArray()
		if err == nil && len(arr) != 2 {
			err = fmt.Errorf("a reply of %d values", len(arr))
		}
		if err != nil {
			return fmt.Errorf("read the keyword filters of user %d: %w", users[i], err)
		}
		version, _ := arr[0].ToString()
		m, err := arr[1].AsStrMap()
		if err != nil {
			return fmt.Errorf("read the keyword filters of user %d: %w", users[i], err)
		}
		want := s.canonicalKeywords(users[i], m)
		if maps.Equal(want, m) && (version != "") == (len(m) > 0) {
			continue
		}
		args := []string{version, newKeywordVersion()}
		for id, rec := range want {
			args = append(args, id, rec)
		}
		cmds = append(cmds, keywordReplace.Cmd(s.Redis.B(), s.KeywordKeys(users[i]), args))
	}
	for _, r := range s.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return err
		}
		st.KeywordFilters += n
	}
	return nil
}

// canonicalKeywords is owner's filters hash m as the records make it now:
// the filters in force, each under the id its keyword derives, the newer
// of two that share one.
func (s *Service) canonicalKeywords(owner store.ID, m map[string]string) map[string]string {
	now := s.NowMS()
	best := map[store.ID]core.KeywordFilter{}
	for id, rec := range m {
		f, ok := timeline.ParseKeywordFilter(owner, id, rec)
		if !ok || !inForce(f, now) {
			continue
		}
		f.ID = KeywordFilterID(owner, keyword.Normalize(f.Keyword))
		if old, ok := best[f.ID]; !ok || f.CreatedAt.After(old.CreatedAt) {
			best[f.ID] = f
		}
	}
	out := make(map[string]string, len(best))
	for id, f := range best {
		out[store.FormatID(id)] = KeywordRecord(f)
	}
	return out
}

// KeywordRecord is f's record, as keywordAdd writes it.
func KeywordRecord(f core.KeywordFilter) string {
	w, expires := keywordFields(f)
	return w + " " + core.Itoa64(f.CreatedAt.UnixMilli()) + " " + expires + " " + f.Keyword
}

// keywordFields are the fields of f's record that an add sets: whole
// word ("1" or "0") and the end (ms, "0" for none).
func keywordFields(f core.KeywordFilter) (w, expires string) {
	w, expires = "0", "0"
	if f.WholeWord {
		w = "1"
	}
	if f.ExpiresAt != nil {
		expires = core.Itoa64(f.ExpiresAt.UnixMilli())
	}
	return w, expires
}
