package faults

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/redis/rueidis"
)

// buildFeedd builds ./cmd/feedd into the test's temporary directory and
// returns the binary's path.
func buildFeedd(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "feedd")
	build := exec.Command("go", "build", "-o", bin, "./cmd/feedd")
	build.Dir = repoRoot(tb)
	if out, err := build.CombinedOutput(); err != nil {
		tb.Fatalf("go build ./cmd/feedd: %v\n%s", err, out)
	}
	return bin
}

// makeFollowers makes n users following author, in bulk; their ids are
// author+1 ... author+n.
func makeFollowers(tb testing.TB, s *feedcore.Service, author feedcore.ID, n int) []feedcore.ID {
	tb.Helper()
	ctx := context.Background()
	if err := s.PutUser(ctx, feedcore.User{ID: author, Handle: "a" + feedcore.FormatID(author)}); err != nil {
		tb.Fatal(err)
	}
	users := make([]feedcore.User, n)
	edges := make([]feedcore.Edge, n)
	ids := make([]feedcore.ID, n)
	for i := range n {
		ids[i] = author + 1 + feedcore.ID(i)
		users[i] = feedcore.User{ID: ids[i], Handle: "f" + feedcore.FormatID(ids[i])}
		edges[i] = feedcore.Edge{Follower: ids[i], Followee: author}
	}
	for start := 0; start < n; start += 2000 {
		end := min(start+2000, n)
		if _, err := s.PutUsers(ctx, users[start:end]); err != nil {
			tb.Fatal(err)
		}
		if _, err := s.FollowMany(ctx, edges[start:end]); err != nil {
			tb.Fatal(err)
		}
	}
	return ids
}

// zsetIDs reads whole sorted sets of post ids (8-byte big-endian members),
// in pipelined batches.
func zsetIDs(ctx context.Context, c rueidis.Client, keys []string) ([][]feedcore.ID, error) {
	out := make([][]feedcore.ID, 0, len(keys))
	for start := 0; start < len(keys); start += 500 {
		batch := keys[start:min(start+500, len(keys))]
		cmds := make(rueidis.Commands, len(batch))
		for i, k := range batch {
			cmds[i] = c.B().Zrange().Key(k).Min("0").Max("-1").Build()
		}
		for i, r := range c.DoMulti(ctx, cmds...) {
			ms, err := r.AsStrSlice()
			if err != nil {
				return nil, fmt.Errorf("ZRANGE %s: %w", batch[i], err)
			}
			ids := make([]feedcore.ID, len(ms))
			for j, m := range ms {
				if len(m) != 8 {
					return nil, fmt.Errorf("%s: member of %d bytes", batch[i], len(m))
				}
				ids[j] = binary.BigEndian.Uint64([]byte(m))
			}
			out = append(out, ids)
		}
	}
	return out, nil
}

// kinds counts errors by kind: their text with numbers and ids blanked.
type kinds struct {
	mu sync.Mutex
	n  map[string]int
}

var digits = regexp.MustCompile(`[0-9a-f]{6,}|[0-9]+`)

func (k *kinds) add(kind string) {
	kind = digits.ReplaceAllString(kind, "N")
	if len(kind) > 140 {
		kind = kind[:140] + "..."
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n == nil {
		k.n = map[string]int{}
	}
	k.n[kind]++
}

func (k *kinds) String() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	var lines []string
	for kind, n := range k.n {
		lines = append(lines, fmt.Sprintf("%6d  %s", n, kind))
	}
	sort.Strings(lines)
	if len(lines) == 0 {
		return "  none"
	}
	return strings.Join(lines, "\n")
}

// count is how many failures of kind (as add files it) there were.
func (k *kinds) count(kind string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n[digits.ReplaceAllString(kind, "N")]
}

func (k *kinds) total() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := 0
	for _, n := range k.n {
		t += n
	}
	return t
}

// countingHandler is a slog handler that counts the records at or above
// Warn by message and error, and forwards nothing.
type countingHandler struct {
	k *kinds
}

func (h countingHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	kind := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			kind += ": " + a.Value.String()
		}
		return true
	})
	h.k.add(kind)
	return nil
}

func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func countingLogger(k *kinds) *slog.Logger { return slog.New(countingHandler{k: k}) }
