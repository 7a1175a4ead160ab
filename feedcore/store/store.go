package store

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/redis/rueidis"
)

// Store is what every part of feedcore shares: the Redis client, the name
// of every key, and the scripts, loaded on demand.
type Store struct {
	// Redis is the client every command goes through.
	Redis rueidis.Client
	// Keys names every key, under the configured prefix.
	Keys Keys

	// loadMu serialises loadScripts: the pipelines that meet NOSCRIPT at
	// once (after a restart or a failover) load the scripts one after the
	// other, not all at the same time.
	loadMu sync.Mutex
}

// Script is a Lua script run by EVALSHA inside ordinary pipelines, so a
// script call costs no extra round trip. Store.DoMulti loads the scripts
// when a server answers NOSCRIPT (first use, restart, failover) and retries.
type Script struct {
	Src, sha string
	readOnly bool
}

var allScripts []*Script

func NewScript(readOnly bool, src string) *Script {
	sum := sha1.Sum([]byte(src))
	sc := &Script{Src: src, sha: hex.EncodeToString(sum[:]), readOnly: readOnly}
	allScripts = append(allScripts, sc)
	return sc
}

func (sc *Script) Cmd(b rueidis.Builder, keys, args []string) rueidis.Completed {
	if sc.readOnly {
		return b.EvalshaRo().Sha1(sc.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
	}
	return b.Evalsha().Sha1(sc.sha).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
}

// DoMulti sends cmds as one pipeline. Script calls a server did not know
// (first use, restart, failover) are resent, and only those, once the
// scripts are loaded: the others ran, and some (a log append) must not run
// twice.
func (s *Store) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	for i := range cmds {
		if isScript(cmds[i]) {
			cmds[i] = cmds[i].Pin() // kept, not recycled, so it can be resent
		}
	}
	rs := s.Redis.DoMulti(ctx, cmds...)
	var again []int
	for i, r := range rs {
		if e, ok := rueidis.IsRedisErr(r.Error()); ok && e.IsNoScript() {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return rs
	}
	if err := s.LoadScripts(ctx); err != nil {
		for _, i := range again {
			rs[i] = rueidis.NewErrorResult(fmt.Errorf("load scripts: %w", err))
		}
		return rs
	}
	resend := make([]rueidis.Completed, len(again))
	for j, i := range again {
		resend[j] = cmds[i]
	}
	for j, r := range s.Redis.DoMulti(ctx, resend...) {
		rs[again[j]] = r
	}
	return rs
}

// isScript reports whether cmd calls a script by its hash (script.cmd).
func isScript(cmd rueidis.Completed) bool {
	name := cmd.Commands()[0]
	return name == "EVALSHA" || name == "EVALSHA_RO"
}

func (s *Store) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	return s.DoMulti(ctx, cmd)[0]
}

// LoadScripts loads every script on every node.
func (s *Store) LoadScripts(ctx context.Context) error {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	for _, n := range s.Redis.Nodes() {
		for _, sc := range allScripts {
			if err := n.Do(ctx, n.B().ScriptLoad().Script(sc.Src).Build()).Error(); err != nil {
				return err
			}
		}
	}
	return nil
}
