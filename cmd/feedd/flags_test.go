package main

import (
	"bytes"
	"flag"
	"net"
	"strings"
	"testing"
	"time"
)

func TestEnvThenFlags(t *testing.T) {
	t.Setenv("FEED_REDIS_URL", "redis://env:6379")
	t.Setenv("FEED_INBOX_CAP", "100")
	t.Setenv("FEED_FOLLOW_LIMIT", "50")
	t.Setenv("FEED_KEY_PREFIX", "tenant1:")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	s := addStoreFlags(fs)
	set, err := parse(fs, []string{"--inbox-cap", "200"})
	if err != nil {
		t.Fatal(err)
	}
	if s.redisURL != "redis://env:6379" || s.inboxCap != 200 || s.followLimit != 50 || s.bigV != 10000 {
		t.Fatalf("flags = %+v", s)
	}
	if !set["redis"] || !set["inbox-cap"] || !set["follow-limit"] || set["bigv-threshold"] {
		t.Fatalf("explicitly set = %v", set)
	}
	if o := s.options(); o.InboxCap != 200 || o.CursorKey != nil || o.Prefix != "tenant1:" {
		t.Fatalf("options = %+v", o)
	}
}

func TestBadEnvNamesItsFlag(t *testing.T) {
	t.Setenv("FEED_ACTIVE_WINDOW", "a week")
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	addStoreFlags(fs)
	_, err := parse(fs, nil)
	if err == nil || !strings.Contains(err.Error(), "FEED_ACTIVE_WINDOW") || !strings.Contains(err.Error(), "--active-window") {
		t.Fatalf("err = %v", err)
	}
}

func TestKeyPrefixWithoutBraces(t *testing.T) {
	validates(t, "key-prefix", map[string]bool{"": true, "tenant1:": true, "{t}:": false, "t}": false})
}

func TestRedisPipelinesArePowersOfTwo(t *testing.T) {
	validates(t, "redis-pipelines", map[string]bool{"1": true, "2": true, "4": true, "8": true, "0": false, "3": false, "16": false, "-1": false})
}

// validates checks that the store flags validate with --name set to each
// value as ok says.
func validates(t *testing.T, name string, ok map[string]bool) {
	t.Helper()
	for v, want := range ok {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		s := addStoreFlags(fs)
		if _, err := parse(fs, []string{"--" + name, v}); err != nil {
			t.Fatal(err)
		}
		if err := s.validate(); (err == nil) != want {
			t.Errorf("--%s %q: validate() = %v", name, v, err)
		}
	}
}

func TestBrowsable(t *testing.T) {
	for in, want := range map[string]string{":8080": "localhost:8080", "0.0.0.0:9000": "localhost:9000", "[::]:80": "localhost:80", "127.0.0.1:5": "localhost:5", "10.0.0.1:5": "10.0.0.1:5"} {
		addr, _ := net.ResolveTCPAddr("tcp", in)
		if got := browsable(addr); got != want {
			t.Errorf("browsable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTokenCommand(t *testing.T) {
	t.Setenv("FEED_JWT_SECRET", "") // hermetic: a secret in the environment would be used
	var out bytes.Buffer
	if err := run(t.Context(), []string{"token", "--user", "7", "--jwt-secret", testSecret}, cmdOptions{stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(strings.TrimSpace(out.String()), ".") != 2 {
		t.Fatalf("token = %q", out.String())
	}
	if err := run(t.Context(), []string{"token", "--user", "7"}, cmdOptions{stdout: &out}); err == nil {
		t.Fatal("token without a secret succeeded")
	}
	if err := run(t.Context(), []string{"nope"}, cmdOptions{stdout: &out}); err == nil {
		t.Fatal("unknown command succeeded")
	}
}

// --max-blocks reaches feedcore's limit, and must be positive.
func TestMaxBlocks(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	s := addStoreFlags(fs)
	if _, err := parse(fs, []string{"--max-blocks", "7"}); err != nil {
		t.Fatal(err)
	}
	if o := s.options(); o.MaxRelations != 7 {
		t.Fatalf("MaxRelations = %d, want 7", o.MaxRelations)
	}
	s.maxBlocks = 0
	if err := s.validate(); err == nil || !strings.Contains(err.Error(), "--max-blocks") {
		t.Fatalf("--max-blocks 0: validate() = %v", err)
	}
}

// --preview-grace reaches feedcore's options, and must be positive: 0
// would make every preview stale the moment it is due.
func TestPreviewGrace(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	s := addStoreFlags(fs)
	if _, err := parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	if o := s.options(); o.PreviewGrace != time.Hour {
		t.Fatalf("default PreviewGrace = %v, want 1h", o.PreviewGrace)
	}
	if _, err := parse(fs, []string{"--preview-grace", "90m"}); err != nil {
		t.Fatal(err)
	}
	if o := s.options(); o.PreviewGrace != 90*time.Minute {
		t.Fatalf("PreviewGrace = %v, want 90m", o.PreviewGrace)
	}
	for _, bad := range []string{"0s", "-1h"} {
		if _, err := parse(fs, []string{"--preview-grace", bad}); err != nil {
			t.Fatal(err)
		}
		if err := s.validate(); err == nil || !strings.Contains(err.Error(), "--preview-grace must be positive") {
			t.Errorf("--preview-grace %s: validate() = %v", bad, err)
		}
	}
}
