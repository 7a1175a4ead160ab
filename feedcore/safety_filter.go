package feedcore

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"
)

// Reads filter the viewer's relations in the viewer's own slot, in the
// round trips they already make (design: filter at fan-out, derived sets
// per viewer). hiddenAuthors (hx) lists every author hidden from a viewer
// with the time it ends; a followee in it is neither pulled (its outbox is
// never read) nor filed in a live snapshot. hideNotes (xn) names the
// followed authors whose entries may still sit in the inbox until the
// clean-up removes them; reads skip their items as they skip recent
// unfollows. Neither read grows with the viewer's relations: the filter
// runs inside Redis, and the notes are bounded by the followees.

// visibleMembers replies the members of KEYS[1] (a set when ARGV[2] is
// "s", else a sorted set, whole) that are not in the viewer's hidden
// authors KEYS[2] with an end after ARGV[1] ms. An ended mute counts as
// gone at once, whatever the settle has pruned.
var visibleMembers = newScript(true, `
local ms
if ARGV[2] == 's' then ms = redis.call('SMEMBERS', KEYS[1]) else ms = redis.call('ZRANGE', KEYS[1], 0, -1) end
if #ms == 0 or redis.call('EXISTS', KEYS[2]) == 0 then return ms end
local now, out = tonumber(ARGV[1]), {}
for _, m in ipairs(ms) do
  local u = redis.call('ZSCORE', KEYS[2], m)
  if not u or tonumber(u) <= now then out[#out + 1] = m end
end
return out
`)

// visibleBigVCmd reads viewer's big-V followees, less the hidden ones.
func (s *Service) visibleBigVCmd(viewer ID, now int64) rueidis.Completed {
	return visibleMembers.cmd(s.c.B(), []string{s.k.bigFollowees(viewer), s.k.hiddenAuthors(viewer)}, []string{scoreArg(now), "s"})
}

// visibleFolloweesCmd reads viewer's following set, less the hidden
// followees.
func (s *Service) visibleFolloweesCmd(viewer ID, now int64) rueidis.Completed {
	return visibleMembers.cmd(s.c.B(), []string{s.k.following(viewer), s.k.hiddenAuthors(viewer)}, []string{scoreArg(now), "z"})
}

// liveNotes replies the authors in the hide notes KEYS[1] whose note ends
// after ARGV[1] ms and who are still hidden then (in the hidden authors
// KEYS[2]): a mute that ended, an unblock, show the author's entries at
// once, whether or not the clean-up has run. Bounded by the followees.
var liveNotes = newScript(true, `
local now, out = tonumber(ARGV[1]), {}
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], '(' .. ARGV[1], '+inf', 'BYSCORE')) do
  local u = redis.call('ZSCORE', KEYS[2], m)
  if u and tonumber(u) > now then out[#out + 1] = m end
end
return out
`)

// hideNotesCmd reads the authors viewer's reads skip for now: hidden
// followees whose inbox entries the clean-up may not have removed yet.
func (s *Service) hideNotesCmd(viewer ID, now int64) rueidis.Completed {
	return liveNotes.cmd(s.c.B(), []string{s.k.hideNotes(viewer), s.k.hiddenAuthors(viewer)}, []string{scoreArg(now)})
}

// visibleFollowees returns the accounts viewer follows, less those hidden
// from it.
func (s *Service) visibleFollowees(ctx context.Context, viewer ID) ([]ID, error) {
	ms, err := s.do(ctx, s.visibleFolloweesCmd(viewer, s.nowMS())).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("read followees: %w", err)
	}
	return idsOf(ms)
}

// skipAuthors adds the ids in r (a member list) to the view's authors
// whose items a page leaves out.
func (v *view) skipAuthors(r rueidis.RedisResult) error {
	ms, _ := r.AsStrSlice()
	ids, err := idsOf(ms)
	if err != nil {
		return err
	}
	if len(ids) > 0 && v.skip == nil { // usually none: no map for most pages
		v.skip = make(map[ID]bool, len(ids))
	}
	for _, id := range ids {
		v.skip[id] = true
	}
	return nil
}

// pushTargets replies the next targets of a fan-out task: the members of
// the followers or active set KEYS[1] in the lex range ARGV[1]..ARGV[2],
// at most ARGV[3] of them, less the readers in the author's no-push set
// KEYS[2] with an end after ARGV[4] ms (ARGV[4] empty: none left out; a
// delete removes from every inbox). It replies {scanned, last scanned,
// targets...}: the task moves on past every member scanned, written or
// not. One slot: the author's.
var pushTargets = newScript(true, `
local ms = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'BYLEX', 'LIMIT', 0, tonumber(ARGV[3]))
if #ms == 0 then return {0} end
local out = {#ms, ms[#ms]}
local filter = ARGV[4] ~= '' and redis.call('EXISTS', KEYS[2]) == 1
local now = tonumber(ARGV[4])
for _, m in ipairs(ms) do
  local u = filter and redis.call('ZSCORE', KEYS[2], m)
  if not u or tonumber(u) <= now then out[#out + 1] = m end
end
return out
`)

// targetChunk is one read of a task's targets.
type targetChunk struct {
	scanned int      // members of the set read
	last    string   // the last of them; the task goes on after it
	targets []string // those to write
}

// readTargets reads the next chunk of t's targets after lo.
func (s *Service) readTargets(ctx context.Context, t task, lo string) (targetChunk, error) {
	now := ""
	if t.Type != evDelete {
		now = scoreArg(s.nowMS())
	}
	arr, err := s.do(ctx, pushTargets.cmd(s.c.B(), []string{t.Set, s.k.noPush(t.Author)},
		[]string{lo, t.Hi, itoa(chunkSize), now})).ToArray()
	if err != nil {
		return targetChunk{}, fmt.Errorf("read task targets: %w", err)
	}
	var c targetChunk
	n, _ := arr[0].AsInt64()
	if c.scanned = int(n); c.scanned == 0 {
		return c, nil
	}
	c.last, _ = arr[1].ToString()
	c.targets = make([]string, 0, len(arr)-2)
	for _, m := range arr[2:] {
		str, _ := m.ToString()
		c.targets = append(c.targets, str)
	}
	return c, nil
}
